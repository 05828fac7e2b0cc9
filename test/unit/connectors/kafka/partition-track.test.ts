import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionTrack } from '../../../../connectors/kafka/partition-track.js';

function admitAll(track: PartitionTrack, offsets: number[]): void {
  for (const offset of offsets) assert.equal(track.admit(BigInt(offset)), 'deliver');
}

test('kafka connector - the commit position is the offset after the settled prefix (BRG-2)', () => {
  const track = new PartitionTrack();
  admitAll(track, [5, 6, 7, 8]);
  assert.equal(track.pendingCommit(), undefined);
  assert.equal(track.settle(6n), false, 'offset 5 is still unsettled');
  assert.equal(track.pendingCommit(), undefined);
  assert.equal(track.settle(5n), true);
  assert.equal(track.pendingCommit(), 7n);
  track.markCommitted(7n);
  assert.equal(track.pendingCommit(), undefined);
  assert.equal(track.settle(8n), false);
  assert.equal(track.settle(7n), true);
  assert.equal(track.pendingCommit(), 9n);
  assert.deepEqual(track.unsettled(), []);
});

test('kafka connector - offset gaps (compaction, transaction markers) do not stall commits (BRG-2)', () => {
  const track = new PartitionTrack();
  admitAll(track, [10, 13, 20]);
  track.settle(10n);
  track.settle(13n);
  assert.equal(track.pendingCommit(), 14n);
  track.settle(20n);
  assert.equal(track.pendingCommit(), 21n);
});

test('kafka connector - a retry rewinds: the record and later ones come again in a new epoch (ORD-3)', () => {
  const track = new PartitionTrack();
  admitAll(track, [0, 1, 2, 3]);
  track.settle(0n);
  assert.equal(track.rewind(1n, 0), true);
  assert.equal(track.epoch, 1);
  assert.deepEqual(track.unsettled(), [], 'the rewound records are no longer outstanding');
  assert.equal(track.pendingCommit(), 1n, 'commits stop before the retried record');
  assert.equal(track.admit(1n), 'deliver');
  assert.equal(track.admit(2n), 'deliver');
  assert.equal(track.admit(4n), 'deliver');
  assert.deepEqual(track.unsettled(), [1n, 2n, 4n]);
});

test('kafka connector - only records the bridge received before a rewind are redeliveries (MSG-1)', () => {
  const track = new PartitionTrack();
  admitAll(track, [0, 1, 2, 3]); // all read ahead
  assert.equal(track.handOut(0n), false);
  assert.equal(track.handOut(1n), false);
  assert.equal(track.rewind(1n, 0), true);
  admitAll(track, [1, 2, 3]);
  assert.equal(track.handOut(1n), true, 'received before the rewind');
  assert.equal(track.handOut(2n), false, 'only read ahead before the rewind');
});

test('kafka connector - a stale copy asking for a retry changes nothing (ORD-3)', () => {
  const track = new PartitionTrack();
  admitAll(track, [0, 1, 2, 3]);
  assert.equal(track.rewind(1n, 0), true);
  assert.equal(track.rewind(2n, 0), false, 'a stale copy asking for a retry changes nothing');
  assert.equal(track.epoch, 1);
});

test('kafka connector - an ack of a stale copy is final: its fresh copy is skipped (BRG-2)', () => {
  const track = new PartitionTrack();
  admitAll(track, [0, 1, 2]);
  assert.equal(track.rewind(0n, 0), true);
  track.settle(1n); // the stale copy of 1 was forwarded and acked meanwhile
  assert.equal(track.admit(0n), 'deliver');
  assert.equal(track.admit(1n), 'skip');
  assert.equal(track.admit(2n), 'deliver');
  assert.deepEqual(track.unsettled(), [0n, 2n]);
  track.settle(0n);
  assert.equal(track.pendingCommit(), 2n, 'the skipped record counts as settled');
  assert.equal(track.rewind(1n, 1), false, 'a settled offset is not rewound');
});

test('kafka connector - the restart position loses nothing when a track is abandoned (BRG-5)', () => {
  const track = new PartitionTrack();
  assert.equal(track.restartPosition(), undefined);
  admitAll(track, [7, 8, 9]);
  assert.equal(track.restartPosition(), 7n, 'where the group stood when the track began');
  track.settle(7n);
  track.markCommitted(8n);
  assert.equal(track.restartPosition(), 8n);
});

test('kafka connector - settling below the commit position changes nothing (BRG-2)', () => {
  const track = new PartitionTrack();
  admitAll(track, [0, 1]);
  track.settle(0n);
  track.settle(1n);
  assert.equal(track.settle(0n), false);
  assert.equal(track.rewind(0n, 0), false);
  assert.equal(track.pendingCommit(), 2n);
});
