// Listing the journals a repository holds: its own branch and the remote-tracking copies, loose or
// packed, with remote names that contain slashes, and nothing else.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { listJournalRefs } from '../../src/journal/journal-refs.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

const repos: TempRepo[] = [];
after(async () => {
  for (const repo of repos) await repo.remove();
});

describe('listJournalRefs', () => {
  it('lists the local journal first, then every remote-tracking journal, loose or packed', async () => {
    const repo = await createTempRepo({ files: { 'a.txt': 'a\n' }, commit: true });
    repos.push(repo);
    assert.deepEqual(listJournalRefs(`${repo.root}/.git`), []);
    const head = (await repo.git('rev-parse', 'HEAD')).trim();
    await repo.git('update-ref', 'refs/remotes/origin/agent-journal', head);
    await repo.git('update-ref', 'refs/remotes/team/west/agent-journal', head);
    await repo.git('pack-refs', '--all');
    await repo.git('update-ref', 'refs/heads/agent-journal', head);
    await repo.git('update-ref', 'refs/remotes/backup/agent-journal', head);
    await repo.git('update-ref', 'refs/remotes/origin/main', head);
    assert.deepEqual(
      listJournalRefs(`${repo.root}/.git`).map((r) => [r.ref, r.source, r.local, r.tip === head]),
      [
        ['refs/heads/agent-journal', 'local', true, true],
        ['refs/remotes/backup/agent-journal', 'backup', false, true],
        ['refs/remotes/origin/agent-journal', 'origin', false, true],
        ['refs/remotes/team/west/agent-journal', 'team/west', false, true],
      ],
    );
  });
});
