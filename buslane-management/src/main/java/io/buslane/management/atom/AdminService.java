package io.buslane.management.atom;

import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;

/**
 * The management API without HTTP: authorises a request, routes it by method and path to the resource that
 * handles it, and turns every failure into the service's error response. Blocks on engine futures, so it runs on
 * worker threads. Thread-safe.
 */
final class AdminService {

    private final Clock clock;
    private final AdminAuth auth;
    private final EntityResource entities;
    private final SubscriptionResource subscriptions;
    private final RuleResource rules;
    private final long startedAtMs;

    AdminService(Engine engine, SasValidator validator, Clock clock) {
        this.clock = clock;
        this.auth = new AdminAuth(validator, clock);
        this.entities = new EntityResource(engine, clock);
        this.subscriptions = new SubscriptionResource(engine, clock);
        this.rules = new RuleResource(engine, clock);
        this.startedAtMs = clock.epochMillis();
    }

    AdminResponse handle(AdminRequest r) {
        try {
            return route(auth.withSupplementaryGrants(r.authorised(auth.check(r))));
        } catch (RuntimeException e) {
            return AdminErrors.of(e, r, clock.epochMillis());
        }
    }

    private AdminResponse route(AdminRequest r) {
        String m = r.method();
        return switch (r.path().kind()) {
            case ENTITY -> switch (m) {
                case "GET" -> entities.get(r);
                case "PUT" -> entities.put(r);
                case "DELETE" -> entities.delete(r);
                default -> notAllowed(r, "GET, PUT, DELETE");
            };
            case SUBSCRIPTION -> switch (m) {
                case "GET" -> subscriptions.get(r);
                case "PUT" -> subscriptions.put(r);
                case "DELETE" -> subscriptions.delete(r);
                default -> notAllowed(r, "GET, PUT, DELETE");
            };
            case RULE -> switch (m) {
                case "GET" -> rules.get(r);
                case "PUT" -> rules.put(r);
                case "DELETE" -> rules.delete(r);
                default -> notAllowed(r, "GET, PUT, DELETE");
            };
            case LIST_QUEUES -> m.equals("GET") ? entities.listQueues(r) : notAllowed(r, "GET");
            case LIST_TOPICS -> m.equals("GET") ? entities.listTopics(r) : notAllowed(r, "GET");
            case SUBSCRIPTIONS -> m.equals("GET") ? subscriptions.list(r) : notAllowed(r, "GET");
            case RULES -> m.equals("GET") ? rules.list(r) : notAllowed(r, "GET");
            case NAMESPACE_INFO -> m.equals("GET") ? namespaceInfo(r) : notAllowed(r, "GET");
            case UNKNOWN_COLLECTION -> AdminErrors.error(404, "Only $Resources/queues and $Resources/topics can "
                    + "be listed.", r, clock.epochMillis());
            case ROOT -> m.equals("GET") ? entities.discoverRoot(r) : AdminErrors.error(404, "No entity path was "
                    + "given; address /{queue}, /{topic}, "
                    + "/{topic}/Subscriptions/{subscription} or /$Resources/queues.", r, clock.epochMillis());
        };
    }

    private AdminResponse namespaceInfo(AdminRequest r) {
        String name = r.namespaceName();
        return AdminResponse.entry(200, AtomWriter.entry(r, new AtomWriter.Entry("$namespaceinfo", name,
                startedAtMs, startedAtMs, o -> DescriptionWriter.namespace(o, name, startedAtMs, startedAtMs))));
    }

    private AdminResponse notAllowed(AdminRequest r, String allowed) {
        return AdminErrors.error(405, "The method " + r.method() + " is not allowed here; use " + allowed + ".", r,
                clock.epochMillis());
    }
}
