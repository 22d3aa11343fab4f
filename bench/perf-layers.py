#!/usr/bin/env python3
"""Where a broker's CPU went during the measured windows of a bench run, by layer.

Usage: perf-layers.py PERF_DATA BENCH_LOG

PERF_DATA is a system-wide `perf record -a -g -k CLOCK_MONOTONIC` taken while bench/run.sh ran with
-XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer on the broker (bench/profile.sh does both). BENCH_LOG is that run's
output: its "(window: pid P, monotonic T0,T1 s, N units)" lines say which samples count (the broker's process, inside
a measured window) and the workload each window measured.

Each sample is attributed to the innermost stack frame that belongs to a known layer (a JDK or JVM frame counts for
its caller: HashMap.put called by proton-j is proton-j's); a sample whose innermost frame is in the kernel is counted
as the kernel's, split by the system call and the layer that made it. JIT compiler and GC threads are layers of their own.
"""
import collections
import re
import subprocess
import sys

LAYERS = [
    ("org.apache.qpid.proton.", "proton-j (AMQP engine)"),
    ("io.netty.", "Netty / Vert.x"),
    ("io.vertx.", "Netty / Vert.x"),
    ("io.buslane.amqp.", "Buslane AMQP layer"),
    ("io.buslane.engine.", "Buslane engine"),
    ("io.buslane.journal.", "Buslane journal"),
    ("io.buslane.", "Buslane other"),
    ("org.apache.activemq.artemis.protocol.amqp.", "Artemis AMQP layer"),
    ("org.apache.activemq.artemis.core.journal.", "Artemis journal"),
    ("org.apache.activemq.artemis.core.io.", "Artemis journal"),
    ("org.apache.activemq.artemis.", "Artemis core"),
]


def layer_of_frame(sym):
    # a compiled Java frame's symbol reads "<return type> <class>.<method>(<args>)"
    name = sym.split("(")[0].split(" ")[-1]
    for prefix, layer in LAYERS:
        if name.startswith(prefix):
            return layer
    return None


def thread_layer(comm):
    if comm.startswith("C1 Compiler") or comm.startswith("C2 Compiler"):
        return "JIT compiler threads"
    if comm.startswith("GC Thread") or comm.startswith("G1 "):
        return "GC threads"
    if comm in ("VM Thread", "VM Periodic Tas", "Sweeper thread", "Service Thread"):
        return "JVM other threads"
    return None


def windows(log):
    out = []
    for line in open(log, encoding="utf-8"):
        m = re.search(r"\(window: pid (\d+), monotonic ([\d.]+),([\d.]+) s, ([\d.]+) units\)", line)
        if m:
            out.append([int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4)), None])
            continue
        m = re.match(r"\s+(\S+)\s+cpu_us_per_msg\s+(\S+)\s+([\d.]+)", line)
        if m and out and out[-1][4] is None:
            out[-1][4] = (m.group(1), float(m.group(3)))
    return out


def samples(data, pid, t0, t1):
    cmd = ["perf", "script", "-i", data, "--pid", str(pid), "--time", "%.6f,%.6f" % (t0, t1),
           "-F", "comm,pid,time,ip,sym,dso"]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for block in text.split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines:
            continue
        comm = re.split(r"\s+\d+\s", lines[0].strip(), maxsplit=1)[0]
        frames = []
        for l in lines[1:]:
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", l)
            if m:
                frames.append((m.group(1), m.group(2)))
        yield comm, frames


def classify(comm, frames):
    t = thread_layer(comm)
    if t:
        return t
    kernel = bool(frames) and "kernel" in frames[0][1]
    syscall = "other"
    for sym, dso in frames:
        if "kernel" in dso:
            m = re.match(r"(?:__x64_sys_|__se_sys_|__do_sys_|ksys_)(\w+)", sym)
            if m and syscall == "other":
                syscall = m.group(1)
            continue
        layer = layer_of_frame(sym)
        if layer:
            return ("kernel (%s), called from %s" % (syscall, layer)) if kernel else layer
    return ("kernel (%s), other" % syscall) if kernel else "JVM / JDK, other"


GROUPS = ["proton-j + Netty", "socket syscalls", "broker code: AMQP layer, engine/core", "broker code: journal",
          "storage syscalls", "thread wake-ups (futex)", "GC", "JIT", "other"]


def group_of(layer):
    """The coarser group of docs/benchmarks.md's layer table."""
    if layer.startswith("kernel"):
        call = re.match(r"kernel \((\w+)\)", layer).group(1)
        if call in ("fdatasync", "fsync", "pwrite64", "pread64") or ("journal" in layer
                                                                    and call in ("write", "read", "other")):
            return "storage syscalls"
        if call in ("futex", "sched_yield"):
            return "thread wake-ups (futex)"
        if call in ("read", "write", "epoll_wait", "recvfrom", "sendto") or "Netty" in layer or "proton" in layer:
            return "socket syscalls"
        return "other"
    if layer.startswith("proton-j") or layer.startswith("Netty"):
        return "proton-j + Netty"
    if "journal" in layer:
        return "broker code: journal"
    if "AMQP layer" in layer or "engine" in layer or "core" in layer:
        return "broker code: AMQP layer, engine/core"
    if layer.startswith("GC"):
        return "GC"
    if layer.startswith("JIT"):
        return "JIT"
    return "other"


def main():
    data, log = sys.argv[1], sys.argv[2]
    by_workload = collections.OrderedDict()
    for pid, t0, t1, units, result in windows(log):
        if result is None:
            continue
        name, us_per_unit = result
        w = by_workload.setdefault(name, {"counts": collections.Counter(), "us": []})
        w["us"].append(us_per_unit)
        for comm, frames in samples(data, pid, t0, t1):
            w["counts"][classify(comm, frames)] += 1
    for name, w in by_workload.items():
        total = sum(w["counts"].values())
        if total == 0:
            continue
        us = sorted(w["us"])[len(w["us"]) // 2]
        print("%s: %d samples in %d windows; broker CPU %.1f us/msg (median window)"
              % (name, total, len(w["us"]), us))
        for layer, n in w["counts"].most_common():
            print("  %-58s %5.1f %%  %6.2f us/msg" % (layer, 100.0 * n / total, us * n / total))
        grouped = collections.Counter()
        for layer, n in w["counts"].items():
            grouped[group_of(layer)] += n
        print("  grouped (us/msg): " + ", ".join("%s %.1f" % (g, us * grouped[g] / total) for g in GROUPS))


if __name__ == "__main__":
    main()
