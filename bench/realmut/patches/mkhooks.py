# SPDX-License-Identifier: BSD-2-Clause
# mkhooks.py DIR: insert the REALMUT_EVENT hooks (rec/realmut_rec.h) at the
# semantic sites of src/backend/storage/buffer in DIR; hooks.patch is the
# `diff -ru` of a pristine and a hooked tree.
import sys, re
d = sys.argv[1] + '/src/backend/storage/buffer/'
def sub(f, old, new, count=1):
    p = d + f
    s = open(p).read()
    n = s.count(old)
    assert n == count, (f, old, n)
    s = s.replace(old, new)
    open(p, 'w').write(s)
inc = '#include "utils/timestamp.h"\n'
sub('bufmgr.c', inc, inc + '\n#include "realmut_rec.h"\n')
# PinBuffer: the pin the caller owns
sub('bufmgr.c', '''	ref->refcount++;
	Assert(ref->refcount > 0);
	ResourceOwnerRememberBuffer(CurrentResourceOwner, b);
	return result;''', '''	ref->refcount++;
	Assert(ref->refcount > 0);
	ResourceOwnerRememberBuffer(CurrentResourceOwner, b);
	REALMUT_EVENT(REALMUT_PIN, pin, b, 0);
	return result;''')
sub('bufmgr.c', '''	ref = NewPrivateRefCountEntry(b);
	ref->refcount++;

	ResourceOwnerRememberBuffer(CurrentResourceOwner, b);
}''', '''	ref = NewPrivateRefCountEntry(b);
	ref->refcount++;

	ResourceOwnerRememberBuffer(CurrentResourceOwner, b);
	REALMUT_EVENT(REALMUT_PIN, pin, b, 1);
}''')
sub('bufmgr.c', '''	Assert(ref->refcount > 0);
	ref->refcount--;
	if (ref->refcount == 0)''', '''	Assert(ref->refcount > 0);
	ref->refcount--;
	REALMUT_EVENT(REALMUT_UNPIN, unpin, b, 0);
	if (ref->refcount == 0)''')
sub('bufmgr.c', '''		ref = GetPrivateRefCountEntry(buffer, true);
		Assert(ref != NULL);
		ref->refcount++;
	}''', '''		ref = GetPrivateRefCountEntry(buffer, true);
		Assert(ref != NULL);
		ref->refcount++;
		REALMUT_EVENT(REALMUT_PIN, pin, buffer, 2);
	}''')
sub('bufmgr.c', '''	if (mode == BUFFER_LOCK_UNLOCK)
		LWLockRelease(BufferDescriptorGetContentLock(buf));
	else if (mode == BUFFER_LOCK_SHARE)
		LWLockAcquire(BufferDescriptorGetContentLock(buf), LW_SHARED);
	else if (mode == BUFFER_LOCK_EXCLUSIVE)
		LWLockAcquire(BufferDescriptorGetContentLock(buf), LW_EXCLUSIVE);
	else
		elog(ERROR, "unrecognized buffer lock mode: %d", mode);
}''', '''	if (mode == BUFFER_LOCK_UNLOCK)
	{
		REALMUT_EVENT(REALMUT_UNLOCK, unlock, buffer, 0);
		LWLockRelease(BufferDescriptorGetContentLock(buf));
	}
	else if (mode == BUFFER_LOCK_SHARE)
		LWLockAcquire(BufferDescriptorGetContentLock(buf), LW_SHARED);
	else if (mode == BUFFER_LOCK_EXCLUSIVE)
		LWLockAcquire(BufferDescriptorGetContentLock(buf), LW_EXCLUSIVE);
	else
		elog(ERROR, "unrecognized buffer lock mode: %d", mode);
	if (mode != BUFFER_LOCK_UNLOCK)
		REALMUT_EVENT(REALMUT_LOCK, lock, buffer, mode);
}''')
sub('bufmgr.c', '''	return LWLockConditionalAcquire(BufferDescriptorGetContentLock(buf),
									LW_EXCLUSIVE);
}''', '''	if (!LWLockConditionalAcquire(BufferDescriptorGetContentLock(buf),
								  LW_EXCLUSIVE))
		return false;
	REALMUT_EVENT(REALMUT_LOCK, lock, buffer, BUFFER_LOCK_EXCLUSIVE);
	return true;
}''')
sub('freelist.c', '#include "storage/proc.h"\n', '#include "storage/proc.h"\n#include "realmut_rec.h"\n')
sub('freelist.c', '''		buf = GetBufferFromRing(strategy, buf_state);
		if (buf != NULL)
			return buf;''', '''		buf = GetBufferFromRing(strategy, buf_state);
		if (buf != NULL)
		{
			REALMUT_EVENT(REALMUT_VICTIM, victim, buf->buf_id + 1, 0);
			return buf;
		}''')
sub('freelist.c', '''				if (strategy != NULL)
					AddBufferToRing(strategy, buf);
				*buf_state = local_buf_state;
				return buf;''', '''				if (strategy != NULL)
					AddBufferToRing(strategy, buf);
				*buf_state = local_buf_state;
				REALMUT_EVENT(REALMUT_VICTIM, victim, buf->buf_id + 1, 1);
				return buf;''', 2)
sub('buf_table.c', '#include "storage/bufmgr.h"\n', '#include "storage/bufmgr.h"\n#include "realmut_rec.h"\n')
sub('buf_table.c', '''	if (!result)
		return -1;

	return result->id;''', '''	if (!result)
	{
		REALMUT_EVENT(REALMUT_LOOKUP, lookup, 0, 0);
		return -1;
	}

	REALMUT_EVENT(REALMUT_LOOKUP, lookup, result->id + 1, 0);
	return result->id;''')
sub('Makefile', '	localbuf.o\n', '	localbuf.o \\\n	realmut_rec.o\n')
