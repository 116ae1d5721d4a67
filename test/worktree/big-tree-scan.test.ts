// A full checkpoint of a tree with more tracked files than a witness covers (unchanged.ts): git is
// asked only what the checkpoint needs. With few untracked files, `git status` runs without
// `--ignored=matching` (a fifth of its time on a big tree, and used only by a witness or the
// untracked listing); once many untracked files appear, it is asked again, once, with the ignored
// paths, and the listing takes over. git is the judge after every change: the tree is the one
// `git add -A` + `git write-tree` makes of the same files.
import assert from 'node:assert/strict';
import childProcess from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { withBuiltin } from '../helpers/builtins.js';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { WITNESS_LIMIT } from '../../src/worktree/unchanged.js';
import { useScratch } from '../helpers/scratch.js';
import { gitWorktreeTree, snapshotterFor } from './support.js';

const scratch = useScratch();

// The `git status` commands the snapshotter runs during `fn`: whether each asked for ignored paths.
function statusCalls<T>(fn: () => T): { value: T; statuses: boolean[] } {
  const statuses: boolean[] = [];
  const noting = (original: typeof childProcess.execFileSync) =>
    ((file: string, args: readonly string[], ...rest: unknown[]) => {
      if (args.includes('status')) statuses.push(args.includes('--ignored=matching'));
      return (original as (...all: unknown[]) => unknown)(file, args, ...rest);
    }) as typeof original;
  const value = withBuiltin(childProcess, 'execFileSync', noting, fn);
  return { value, statuses };
}

function write(root: string, path: string, content: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), content);
}

describe('a full checkpoint of a big tracked tree', () => {
  test('few untracked files: git status without ignored paths; many: asked once with them, then the listing; always the tree git makes', async () => {
    const files: Record<string, string> = { '.gitignore': 'build/\n' };
    for (let i = 0; i <= WITNESS_LIMIT; i++) files[`src/d${i % 20}/f${i}.js`] = `export const f${i} = ${i};\n`;
    const repo = await scratch.repo(files);
    const { root } = repo;
    const snapshotter = snapshotterFor(root, { untrackedListingFrom: 20 });
    // `expected`: the git status commands, true for one asked for ignored paths (the listing's own
    // questions, about the directories that changed, are its business: untracked-listing.test.ts).
    const step = async (what: string, change: () => void, expected?: boolean[]) => {
      change();
      const { value, statuses } = statusCalls(() => snapshotter.snapshot());
      if (expected) assert.deepEqual(statuses, expected, `${what}: the git status commands (true: with ignored paths)`);
      assert.equal(value.tree, await gitWorktreeTree(root), what);
    };
    await step('the first checkpoint', () => {}, [false]);
    await step('a tracked edit, a few untracked files, ignored output', () => {
      write(root, 'src/d3/f3.js', 'changed\n');
      for (let i = 0; i < 5; i++) write(root, `notes/n${i}.md`, `note ${i}\n`);
      write(root, 'build/out.js', 'built\n');
    }, [false]);
    await step('a tracked file deleted', () => rmSync(join(root, 'src/d4/f4.js')), [false]);
    await step('many untracked files: asked again with ignored paths, once', () => {
      for (let i = 0; i < 30; i++) write(root, `gen/g${i % 3}/u${i}.txt`, `u ${i}\n`);
    }, [false, true]);
    await step('then the listing: an untracked edit in an unchanged directory, a new one, more ignored output', () => {
      writeFileSync(join(root, 'gen/g1/u1.txt'), 'edited\n');
      write(root, 'gen/g9/new.txt', 'new\n');
      write(root, 'build/more/x.js', 'x\n');
    });
    await step('a tracked edit and an untracked file removed', () => {
      write(root, 'src/d5/f5.js', 'changed too\n');
      rmSync(join(root, 'gen/g2/u2.txt'));
    });
  });
});
