/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * summary.c: the exit summary. The "truth" object holds the ground-truth
 * counters of the planted pathologies, for tests that compare probity's
 * diagnosis with what the service knows it did.
 */
#include <inttypes.h>

#include "summary.h"

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/* JSON string; the only strings printed are paths and fixed names. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_pathologies(FILE *out, unsigned bits)
{
	const char *name;
	unsigned b;
	int first = 1;

	fputc('[', out);
	for (b = 0; (name = pathology_name(b)); b++) {
		if (!(bits & (1u << b)))
			continue;
		if (!first)
			fputc(',', out);
		json_str(out, name);
		first = 0;
	}
	fputc(']', out);
}

void summary_print_text(FILE *out, const struct service_opts *o, const struct service_report *r)
{
	double rps = r->elapsed_s > 0 ? (double)r->requests / r->elapsed_s : 0;

	fprintf(out,
		"probity-demo: %" PRIu64 " requests (%" PRIu64 " failed) in %.2f s, %.0f/s; "
		"latency p50 %.0f us p99 %.0f us; pool hits %" PRIu64 " misses %" PRIu64
		" (%s on %s); truth: frame_waits=%" PRIu64 " leaked_pins=%" PRIu64
		" churn_cycles=%" PRIu64 " long_holds=%" PRIu64 " conn_waits=%" PRIu64 "\n",
		r->requests, r->failed, r->elapsed_s, rps, us(r->lat_p50_ns), us(r->lat_p99_ns),
		r->pool.hits, r->pool.misses, r->io_mode, r->fs_name, r->pool.waits,
		r->truth.leaked_pins, r->truth.churn_cycles, r->truth.long_holds, r->conn.waits);
	(void)o;
}

void summary_print_json(FILE *out, const struct service_opts *o, const struct service_report *r,
			double duration_s)
{
	double rps = r->elapsed_s > 0 ? (double)r->requests / r->elapsed_s : 0;

	fprintf(out, "{\"version\":");
	json_str(out, DEMO_VERSION);
	fprintf(out, ",\"pathologies\":");
	print_pathologies(out, o->pathologies);
	fprintf(out,
		",\"seed\":%" PRIu64 ",\"config\":{\"clients\":%u,\"workers\":%u,\"frames\":%u,"
		"\"conns\":%u,\"queue\":%u,\"hot_pages\":%u,\"catalog_pages\":%u,"
		"\"data_pages\":%" PRIu64 ",\"rate\":%.0f,\"burst\":%" PRIu64
		",\"duration_s\":%.3f,\"max_requests\":%" PRIu64 "}",
		o->seed, o->clients, o->workers, o->frames, o->conns, o->queue, o->hot_pages,
		o->catalog_pages, o->data_pages, o->rate, o->burst, duration_s, o->max_requests);
	fprintf(out, ",\"io\":{\"mode\":");
	json_str(out, r->io_mode);
	fprintf(out, ",\"fs\":");
	json_str(out, r->fs_name);
	fprintf(out, ",\"block_io\":%s,\"data_file\":", r->fs_is_memory ? "false" : "true");
	json_str(out, r->data_path);
	fprintf(out,
		"},\"elapsed_s\":%.3f,\"requests\":%" PRIu64 ",\"failed\":%" PRIu64
		",\"unexpected_errors\":%" PRIu64 ",\"requests_per_s\":%.1f",
		r->elapsed_s, r->requests, r->failed, r->unexpected_errors, rps);
	fprintf(out, ",\"latency_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f,\"mean\":%.1f}",
		us(r->lat_p50_ns), us(r->lat_p99_ns), us(r->lat_max_ns), us(r->lat_mean_ns));
	fprintf(out,
		",\"bufpool\":{\"frames\":%u,\"gets\":%" PRIu64 ",\"hits\":%" PRIu64
		",\"misses\":%" PRIu64 ",\"read_ms\":%.3f,\"read_errors\":%" PRIu64
		",\"waits\":%" PRIu64 ",\"wait_ms\":%.3f,\"puts\":%" PRIu64
		",\"pins_at_exit\":%" PRIu64 ",\"pinned_frames_at_exit\":%u}",
		r->pool.frames, r->pool.gets, r->pool.hits, r->pool.misses, ms(r->pool.read_ns),
		r->pool.read_errors, r->pool.waits, ms(r->pool.wait_ns), r->pool.puts,
		r->pool.pins, r->pool.pinned_frames);
	fprintf(out,
		",\"connpool\":{\"conns\":%u,\"acquires\":%" PRIu64 ",\"releases\":%" PRIu64
		",\"queries\":%" PRIu64 ",\"query_errors\":%" PRIu64 ",\"waits\":%" PRIu64
		",\"wait_ms\":%.3f,\"max_in_use\":%u}",
		r->conn.conns, r->conn.acquires, r->conn.releases, r->conn.queries,
		r->conn.query_errors, r->conn.waits, ms(r->conn.wait_ns), r->conn.max_in_use);
	fprintf(out,
		",\"workq\":{\"capacity\":%u,\"pushes\":%" PRIu64 ",\"processed\":%" PRIu64
		",\"done\":%" PRIu64 ",\"waits\":%" PRIu64 ",\"wait_ms\":%.3f"
		",\"max_in_flight\":%u,\"in_flight_at_exit\":%u}",
		r->queue.capacity, r->queue.pushes, r->queue.processed, r->queue.done,
		r->queue.waits, ms(r->queue.wait_ns), r->queue.max_in_flight, r->queue.in_flight);
	fprintf(out,
		",\"tokens\":{\"capacity\":%" PRIu64 ",\"takes\":%" PRIu64 ",\"taken\":%" PRIu64
		",\"empty\":%" PRIu64 ",\"waits\":%" PRIu64 ",\"wait_ms\":%.3f"
		",\"refunds\":%" PRIu64 ",\"refunded\":%" PRIu64 "}",
		r->tokens.capacity, r->tokens.takes, r->tokens.taken, r->tokens.empty,
		r->tokens.waits, ms(r->tokens.wait_ns), r->tokens.refunds, r->tokens.refunded);
	fprintf(out,
		",\"truth\":{\"frame_waits\":%" PRIu64 ",\"frame_wait_ms\":%.3f"
		",\"leaked_pins\":%" PRIu64 ",\"checksum_failures\":%" PRIu64
		",\"churn_cycles\":%" PRIu64 ",\"long_holds\":%" PRIu64 ",\"long_hold_ms\":%.3f"
		",\"conn_waits\":%" PRIu64 ",\"conn_wait_ms\":%.3f}}\n",
		r->pool.waits, ms(r->pool.wait_ns), r->truth.leaked_pins,
		r->truth.checksum_failures, r->truth.churn_cycles, r->truth.long_holds,
		ms(r->truth.long_hold_ns), r->conn.waits, ms(r->conn.wait_ns));
}
