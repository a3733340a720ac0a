# SPDX-License-Identifier: BSD-2-Clause
# mkmut.py DIR NAME: apply mutation NAME to the hooked copy of
# src/backend/storage/buffer (and src/include/storage for a rename) in DIR.
# The committed NAME.patch files are `diff -ru` of a hooked tree and its
# mutant (bench/realmut/README.md, "Regenerating the patches"); this
# script is how they were made, kept so a reader can see each edit whole.
import sys

d, name = sys.argv[1], sys.argv[2]
B = d + '/src/backend/storage/buffer/'


def sub(path, old, new, count=1):
    s = open(path).read()
    n = s.count(old)
    assert n == count, (path, old[:60], n)
    open(path, 'w').write(s.replace(old, new))


if name == 'move_release':
    # the release path moves: UnlockReleaseBuffer unpins by itself instead
    # of calling (tail-calling) ReleaseBuffer
    sub(B + 'bufmgr.c', '''	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buffer);
}''', '''	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	if (BufferIsLocal(buffer))
	{
		ReleaseBuffer(buffer);
		return;
	}
	/* realmut move_release: the unpin moved here, ReleaseBuffer not called */
	UnpinBuffer(GetBufferDescriptor(buffer - 1), true);
}''')
elif name == 'inline_read':
    # the probed function is inlined into its most frequent caller:
    # ReadBuffer reads by itself instead of tail-calling ReadBufferExtended
    sub(B + 'bufmgr.c', '''Buffer
ReadBuffer(Relation reln, BlockNumber blockNum)
{
	return ReadBufferExtended(reln, MAIN_FORKNUM, blockNum, RBM_NORMAL, NULL);
}''', '''Buffer
ReadBuffer(Relation reln, BlockNumber blockNum)
{
	/* realmut inline_read: ReadBufferExtended's body, inlined */
	bool		hit;
	Buffer		buf;

	if (RELATION_IS_OTHER_TEMP(reln))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
	pgstat_count_buffer_read(reln);
	buf = ReadBuffer_common(RelationGetSmgr(reln), reln->rd_rel->relpersistence,
							MAIN_FORKNUM, blockNum, RBM_NORMAL, NULL, &hit);
	if (hit)
		pgstat_count_buffer_hit(reln);
	return buf;
}''')
elif name == 'reuse_handle':
    # a handle reused after its object's lifetime ended: ReleaseAndReadBuffer
    # asked for the block it already pins drops that pin, then re-pins the
    # same Buffer (re-checking its tag under the new pin)
    sub(B + 'bufmgr.c', '''			bufHdr = GetBufferDescriptor(buffer - 1);
			/* we have pin, so it's ok to examine tag without spinlock */
			if (bufHdr->tag.blockNum == blockNum &&
				RelFileNodeEquals(bufHdr->tag.rnode, relation->rd_node) &&
				bufHdr->tag.forkNum == forkNum)
				return buffer;
			UnpinBuffer(bufHdr, true);''', '''			bufHdr = GetBufferDescriptor(buffer - 1);
			/* we have pin, so it's ok to examine tag without spinlock */
			if (bufHdr->tag.blockNum == blockNum &&
				RelFileNodeEquals(bufHdr->tag.rnode, relation->rd_node) &&
				bufHdr->tag.forkNum == forkNum)
			{
				/*
				 * realmut reuse_handle: end this pin, then reuse the handle:
				 * pin the same buffer again and re-check its tag.
				 */
				UnpinBuffer(bufHdr, true);
				ResourceOwnerEnlargeBuffers(CurrentResourceOwner);
				ReservePrivateRefCountEntry();
				if (PinBuffer(bufHdr, NULL) &&
					bufHdr->tag.blockNum == blockNum &&
					RelFileNodeEquals(bufHdr->tag.rnode, relation->rd_node) &&
					bufHdr->tag.forkNum == forkNum)
					return buffer;
			}
			UnpinBuffer(bufHdr, true);''')
elif name == 'flush_handoff':
    # the resource event's I/O moves to another process: a backend whose
    # victim buffer is dirty no longer writes it (FlushBuffer in
    # BufferAlloc); it gives the buffer up and takes another, leaving the
    # write to the background writer. After 16 dirty victims in a row it
    # sleeps 1 ms (waiting for that writer: a scheduler delay caused by
    # another process's I/O); bounded: after 50 sleeps in one allocation
    # it writes the buffer itself, as the clean build does
    sub(B + 'bufmgr.c', '''/*
 * BufferAlloc -- subroutine for ReadBuffer.''', '''/* realmut flush_handoff: dirty victims given up in this BufferAlloc */
static int	realmut_dirty_skips;

/*
 * BufferAlloc -- subroutine for ReadBuffer.''')
    sub(B + 'bufmgr.c', '''	/* Loop here in case we have to try another victim buffer */
	for (;;)''', '''	realmut_dirty_skips = 0;
	/* Loop here in case we have to try another victim buffer */
	for (;;)''')
    sub(B + 'bufmgr.c', '''		if (oldFlags & BM_DIRTY)
		{
			/*
			 * We need a share-lock''', '''		if (oldFlags & BM_DIRTY)
		{
			/*
			 * realmut flush_handoff: leave the write to the background
			 * writer and take another victim; 1 ms sleep per 16 dirty
			 * victims, at most 50 sleeps, then write it here
			 */
			if (realmut_dirty_skips < 16 * 50)
			{
				if (++realmut_dirty_skips % 16 == 0)
					pg_usleep(1000L);
				UnpinBuffer(buf, true);
				continue;
			}

			/*
			 * We need a share-lock''')
elif name == 'rename_release':
    # the RELEASE operator renamed: ReleaseBuffer is now ReleaseBufferPin
    # (every caller is recompiled through the header's macro)
    sub(d + '/src/include/storage/bufmgr.h', 'extern void ReleaseBuffer(Buffer buffer);\n',
        '/* realmut rename_release: the operator renamed */\n'
        '#define ReleaseBuffer ReleaseBufferPin\n'
        'extern void ReleaseBufferPin(Buffer buffer);\n')
else:
    sys.exit('mkmut.py: unknown mutation ' + name)
