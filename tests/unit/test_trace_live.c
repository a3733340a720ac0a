/* SPDX-License-Identifier: BSD-2-Clause */
/* test_trace_live.c: the live-recording lock of trace files
 * (trace_live__hold / trace_live__holder in src/trace/trace.c): a reader
 * sees the writer's pid while it holds the lock, and nobody once it
 * exited, however it exited (here: SIGKILL). No BPF needed. */
#include <signal.h>
#include <sys/wait.h>
#include "harness.h"
#include "trace/trace.h"

TEST(test_holder_seen_then_gone)
{
	char path[] = "/tmp/pb_live_XXXXXX";
	int fd = mkstemp(path), pipefd[2], pid = -1, got;
	pid_t child;
	char c;

	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(trace_live__holder(path, &got), 0);
	ASSERT_OK(pipe(pipefd));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		int h = trace_live__hold(path);

		close(pipefd[0]);
		if (write(pipefd[1], h >= 0 ? "y" : "n", 1) != 1)
			_exit(1);
		pause();	/* until killed */
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	ASSERT_EQ(c, 'y');
	ASSERT_EQ(trace_live__holder(path, &pid), 1);
	ASSERT_EQ(pid, child);
	kill(child, SIGKILL);
	ASSERT_EQ(waitpid(child, NULL, 0), child);
	ASSERT_EQ(trace_live__holder(path, &pid), 0);
	ASSERT_EQ(pid, 0);
	unlink(path);
	ASSERT_ERR(trace_live__holder(path, &pid), -ENOENT);
	ASSERT_ERR(trace_live__hold(path), -ENOENT);
}
