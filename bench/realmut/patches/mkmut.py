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
elif name == 'rename_release':
    # the RELEASE operator renamed: ReleaseBuffer is now ReleaseBufferPin
    # (every caller is recompiled through the header's macro)
    sub(d + '/src/include/storage/bufmgr.h', 'extern void ReleaseBuffer(Buffer buffer);\n',
        '/* realmut rename_release: the operator renamed */\n'
        '#define ReleaseBuffer ReleaseBufferPin\n'
        'extern void ReleaseBufferPin(Buffer buffer);\n')
else:
    sys.exit('mkmut.py: unknown mutation ' + name)
