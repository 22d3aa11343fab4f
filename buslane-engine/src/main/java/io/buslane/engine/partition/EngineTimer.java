package io.buslane.engine.partition;

import io.buslane.engine.timer.TimerNode;

/** A timer of the engine: knows what to do when it fires. Confined to its shard thread. */
public abstract class EngineTimer extends TimerNode {

    /** Called by the shard when the timer's deadline has passed. */
    public abstract void onTimer(long nowMs);
}
