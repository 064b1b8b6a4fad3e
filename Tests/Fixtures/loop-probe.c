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
#include <unistd.h>

#include "sync-client.h"

#define MAX_SAMPLES (1 << 20)

static int compare(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

int main(int argc, char *argv[])
{
	struct sync_client s = { .pending = -1 };
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
	if (sync_client_connect(&s, context, pw_properties_new(PW_KEY_APP_NAME, "audio-session-loop-probe", NULL)) < 0) {
		fprintf(stderr, "can't connect to PipeWire: %m\n");
		return 1;
	}
	if (sync_client_roundtrip(&s) < 0) {
		fprintf(stderr, "no answer from the daemon\n");
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	while (access(argv[2], F_OK) != 0)
		usleep(2000);
	while (access(argv[3], F_OK) != 0 && n < MAX_SAMPLES) {
		if ((rtt = sync_client_roundtrip(&s)) < 0) {
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

	sync_client_disconnect(&s);
	pw_context_destroy(context);
	pw_main_loop_destroy(s.loop);
	pw_deinit();
	free(samples);
	return 0;
}
