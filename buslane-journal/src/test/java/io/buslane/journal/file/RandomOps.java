package io.buslane.journal.file;

import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Test helper: the next random record of a well-formed mix against a model. ADD of a new or a deleted id (ids are
 * reused, exercising several incarnations), UPDATE or DELETE of a live id. Never a second ADD of a live id.
 */
final class RandomOps {

    private RandomOps() {
    }

    /**
     * @param idSpace ids are drawn from [0, idSpace): small spaces reuse ids often
     */
    static JournalRecord next(SplittableRandom random, JournalModel model, int idSpace) {
        List<Long> live = new ArrayList<>(model.live().keySet());
        int dice = random.nextInt(100);
        if (live.isEmpty() || dice < 45) {
            for (int attempt = 0; attempt < 20; attempt++) {
                long id = random.nextInt(idSpace);
                if (!model.isLive(id)) {
                    return JournalRecord.add(id, (byte) random.nextInt(3), payload(random));
                }
            }
            if (live.isEmpty()) {
                throw new IllegalStateException("id space full and empty at once");
            }
        }
        long id = live.get(random.nextInt(live.size()));
        if (dice < 75) {
            return JournalRecord.update(id, (byte) (10 + random.nextInt(3)), payload(random));
        }
        return JournalRecord.delete(id);
    }

    private static byte[] payload(SplittableRandom random) {
        int size = random.nextInt(50) == 0 ? 600 + random.nextInt(400) : random.nextInt(80);
        byte[] payload = new byte[size];
        random.nextBytes(payload);
        return payload;
    }
}
