/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * One connection to PipeWire and its round trips (a core sync and its answer), for
 * the benchmark fixtures that wait on the daemon (prop-flood.c, loop-probe.c).
 */
#ifndef AUDIO_SESSION_SYNC_CLIENT_H
#define AUDIO_SESSION_SYNC_CLIENT_H

#include <stdio.h>
#include <time.h>

#include <spa/utils/result.h>
#include <pipewire/pipewire.h>

struct sync_client {
	struct pw_main_loop *loop;
	struct pw_core *core;
	struct spa_hook core_listener;
	int pending;
	int failed;
};

static void sync_client_done(void *data, uint32_t id, int seq)
{
	struct sync_client *s = data;
	if (id == PW_ID_CORE && seq == s->pending)
		s->pending = -1;
}

static void sync_client_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct sync_client *s = data;
	fprintf(stderr, "error id:%u: %s (%s)\n", id, message, spa_strerror(res));
	s->failed = 1;
}

static const struct pw_core_events sync_client_events = {
	PW_VERSION_CORE_EVENTS,
	.done = sync_client_done,
	.error = sync_client_error,
};

static double sync_client_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* Connects `s` (its loop made first) with the client properties `props` (taken
 * over); 0 on success. */
static int sync_client_connect(struct sync_client *s, struct pw_context *context, struct pw_properties *props)
{
	s->pending = -1;
	s->core = pw_context_connect(context, props, 0);
	if (s->core == NULL)
		return -1;
	pw_core_add_listener(s->core, &s->core_listener, &sync_client_events, s);
	return 0;
}

/* One round trip, waited for at most 10 s: its length in ms, or a negative number
 * when the daemon did not answer or reported an error. */
static double sync_client_roundtrip(struct sync_client *s)
{
	double t0 = sync_client_now_ms(), deadline = t0 + 10000.0;
	s->pending = pw_core_sync(s->core, PW_ID_CORE, 0);
	while (s->pending != -1 && !s->failed && sync_client_now_ms() < deadline)
		pw_loop_iterate(pw_main_loop_get_loop(s->loop), 100);
	return s->pending == -1 && !s->failed ? sync_client_now_ms() - t0 : -1.0;
}

static void sync_client_disconnect(struct sync_client *s)
{
	spa_hook_remove(&s->core_listener);
	pw_core_disconnect(s->core);
}

#endif
