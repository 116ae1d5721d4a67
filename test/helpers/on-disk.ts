// Imported first by the test files whose subject is how a disk file system reports changes (stat's
// inode, size and times: the untracked listing, the stat pool, the edit checkpoint): their temporary
// folders go back to the system's temporary folder, on disk. The runner (scripts/run-tests.js) puts
// every other test's on a RAM file system, where inode numbers are never reused, as ext4 reuses
// them at once after a delete: a change detector fooled by a reused inode would pass there.
const disk = process.env.SAVEPOINT_TEST_DISK_TMPDIR;
if (disk) process.env.TMPDIR = disk;
