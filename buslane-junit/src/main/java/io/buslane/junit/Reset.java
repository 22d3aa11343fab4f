package io.buslane.junit;

/** What {@link BuslaneExtension} does to the broker after each test. */
public enum Reset {
    /**
     * Deletes every queue and topic and re-creates the configured ones (Config.json and entities defined in code),
     * empty: entities a test created go away, changed properties and session state are restored. Links that clients
     * keep open across tests are closed ({@code amqp:not-found}); build clients per test. The default.
     */
    TOPOLOGY,
    /**
     * Removes every message (active, dead-lettered, scheduled) of every queue and subscription; entities, their
     * properties and open links stay.
     */
    MESSAGES,
    /** Leaves the broker as the test left it. */
    NONE
}
