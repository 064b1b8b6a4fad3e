/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * audio-session-prop-flood: a benchmark fixture. One client that rewrites its
 * own properties (pw_core_update_properties) COUNT times as fast as the daemon
 * takes them, the way a program that misbehaves, or a busy one, could:
 *
 *   audio-session-prop-flood activation COUNT START-FILE
 *       a declared playback session bumping audio.session.activation-request
 *       (what every setActive call sends), the session staying inactive;
 *   audio-session-prop-flood silent COUNT START-FILE
 *       audio.session.control.silent-mode flipped between true and false.
 *
 * Prints "READY" once connected and answered, waits for START-FILE to exist,
 * then sends the updates, waiting for the daemon's answer (a core sync) every
 * 100 updates so that its socket never holds more than that, and prints
 * "DONE <seconds>" once the daemon has handled the last one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spa/utils/result.h>
#include <pipewire/pipewire.h>

#define BATCH 100

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

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Waits for the daemon to answer everything sent so far; 0 on success. */
static int roundtrip(struct state *s)
{
	double deadline = now_seconds() + 10.0;
	s->pending = pw_core_sync(s->core, PW_ID_CORE, 0);
	while (s->pending != -1 && !s->failed && now_seconds() < deadline)
		pw_loop_iterate(pw_main_loop_get_loop(s->loop), 100);
	return s->pending == -1 && !s->failed ? 0 : -1;
}

static void usage(const char *name)
{
	fprintf(stderr, "usage: %s activation|silent COUNT START-FILE\n", name);
}

int main(int argc, char *argv[])
{
	struct state s = { .pending = -1 };
	struct pw_context *context;
	struct pw_properties *props;
	const char *mode, *start_file;
	long count, i;
	double t0, t1;
	char value[32];
	int activation;

	pw_init(&argc, &argv);
	if (argc != 4) {
		usage(argv[0]);
		return 2;
	}
	mode = argv[1];
	count = strtol(argv[2], NULL, 10);
	start_file = argv[3];
	if ((strcmp(mode, "activation") != 0 && strcmp(mode, "silent") != 0) || count <= 0) {
		usage(argv[0]);
		return 2;
	}
	activation = strcmp(mode, "activation") == 0;

	s.loop = pw_main_loop_new(NULL);
	context = s.loop ? pw_context_new(pw_main_loop_get_loop(s.loop), NULL, 0) : NULL;
	if (context == NULL) {
		fprintf(stderr, "can't create a PipeWire context: %m\n");
		return 1;
	}
	props = pw_properties_new(PW_KEY_APP_NAME, "audio-session-prop-flood", NULL);
	if (activation) {
		pw_properties_set(props, "audio.session.category", "playback");
		pw_properties_set(props, "audio.session.active", "false");
	}
	s.core = pw_context_connect(context, props, 0);
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
	while (access(start_file, F_OK) != 0)
		usleep(2000);

	t0 = now_seconds();
	for (i = 0; i < count; i++) {
		struct spa_dict_item item;
		if (activation) {
			snprintf(value, sizeof(value), "%ld", i + 1);
			item = SPA_DICT_ITEM_INIT("audio.session.activation-request", value);
		} else {
			item = SPA_DICT_ITEM_INIT("audio.session.control.silent-mode", i % 2 == 0 ? "true" : "false");
		}
		pw_core_update_properties(s.core, &SPA_DICT_INIT(&item, 1));
		if ((i + 1) % BATCH == 0 && roundtrip(&s) < 0) {
			fprintf(stderr, "no answer from the daemon after %ld updates\n", i + 1);
			return 1;
		}
	}
	if (roundtrip(&s) < 0) {
		fprintf(stderr, "no answer from the daemon after the last update\n");
		return 1;
	}
	t1 = now_seconds();
	printf("DONE %.3f\n", t1 - t0);
	fflush(stdout);

	spa_hook_remove(&s.core_listener);
	pw_core_disconnect(s.core);
	pw_context_destroy(context);
	pw_main_loop_destroy(s.loop);
	pw_deinit();
	return 0;
}
