/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * audio-session-loop-probe: a benchmark fixture. Measures how long the
 * daemon's main loop keeps a client waiting: a round trip (a core sync and
 * its answer) every INTERVAL-MS milliseconds until START-FILE exists and then
 * until STOP-FILE exists; prints "READY" once connected, then
 * "DONE <round trips> <largest ms> <p99 ms> <median ms>" for the round trips
 * between the two files. A round trip waits for everything the loop was doing
 * when the request arrived: the largest one bounds how long the loop was held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spa/utils/result.h>
#include <pipewire/pipewire.h>

#define MAX_SAMPLES (1 << 20)

struct state {
	struct pw_main_loop *loop;
	struct pw_core *core;
	struct spa_hook core_listener;
	int pending;
	int failed;
};

static void on_done(void *data, uint32_t id, int seq)
{
	struct state *s = data;
	if (id == PW_ID_CORE && seq == s->pending)
		s->pending = -1;
}

static void on_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct state *s = data;
	fprintf(stderr, "error id:%u: %s (%s)\n", id, message, spa_strerror(res));
	s->failed = 1;
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = on_done,
	.error = on_error,
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* One round trip; its length in ms, or a negative number when the daemon did not answer. */
static double roundtrip(struct state *s)
{
	double t0 = now_ms(), deadline = t0 + 10000.0;
	s->pending = pw_core_sync(s->core, PW_ID_CORE, 0);
	while (s->pending != -1 && !s->failed && now_ms() < deadline)
		pw_loop_iterate(pw_main_loop_get_loop(s->loop), 100);
	return s->pending == -1 && !s->failed ? now_ms() - t0 : -1.0;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

int main(int argc, char *argv[])
{
	struct state s = { .pending = -1 };
	struct pw_context *context;
	double *samples, rtt;
	size_t n = 0;
	int interval_ms;

	pw_init(&argc, &argv);
	if (argc != 4 || (interval_ms = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: %s INTERVAL-MS START-FILE STOP-FILE\n", argv[0]);
		return 2;
	}
	samples = calloc(MAX_SAMPLES, sizeof(*samples));
	s.loop = pw_main_loop_new(NULL);
	context = s.loop ? pw_context_new(pw_main_loop_get_loop(s.loop), NULL, 0) : NULL;
	if (samples == NULL || context == NULL) {
		fprintf(stderr, "can't set up: %m\n");
		return 1;
	}
	s.core = pw_context_connect(context, pw_properties_new(PW_KEY_APP_NAME, "audio-session-loop-probe", NULL), 0);
	if (s.core == NULL) {
		fprintf(stderr, "can't connect to PipeWire: %m\n");
		return 1;
	}
	pw_core_add_listener(s.core, &s.core_listener, &core_events, &s);
	if (roundtrip(&s) < 0) {
		fprintf(stderr, "no answer from the daemon\n");
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	while (access(argv[2], F_OK) != 0)
		usleep(2000);
	while (access(argv[3], F_OK) != 0 && n < MAX_SAMPLES) {
		if ((rtt = roundtrip(&s)) < 0) {
			fprintf(stderr, "no answer from the daemon within 10 s\n");
			return 1;
		}
		samples[n++] = rtt;
		usleep((useconds_t) interval_ms * 1000);
	}
	if (n == 0) {
		printf("DONE 0 0 0 0\n");
		return 0;
	}
	qsort(samples, n, sizeof(*samples), compare);
	printf("DONE %zu %.3f %.3f %.3f\n", n, samples[n - 1], samples[(n * 99) / 100], samples[n / 2]);
	fflush(stdout);

	spa_hook_remove(&s.core_listener);
	pw_core_disconnect(s.core);
	pw_context_destroy(context);
	pw_main_loop_destroy(s.loop);
	pw_deinit();
	free(samples);
	return 0;
}
