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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync-client.h"

#define BATCH 100

static void usage(const char *name)
{
	fprintf(stderr, "usage: %s activation|silent COUNT START-FILE\n", name);
}

int main(int argc, char *argv[])
{
	struct sync_client s = { .pending = -1 };
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
	if (sync_client_connect(&s, context, props) < 0) {
		fprintf(stderr, "can't connect to PipeWire: %m\n");
		return 1;
	}
	if (sync_client_roundtrip(&s) < 0) {
		fprintf(stderr, "no answer from the daemon\n");
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	while (access(start_file, F_OK) != 0)
		usleep(2000);

	t0 = sync_client_now_ms();
	for (i = 0; i < count; i++) {
		struct spa_dict_item item;
		if (activation) {
			snprintf(value, sizeof(value), "%ld", i + 1);
			item = SPA_DICT_ITEM_INIT("audio.session.activation-request", value);
		} else {
			item = SPA_DICT_ITEM_INIT("audio.session.control.silent-mode", i % 2 == 0 ? "true" : "false");
		}
		pw_core_update_properties(s.core, &SPA_DICT_INIT(&item, 1));
		if ((i + 1) % BATCH == 0 && sync_client_roundtrip(&s) < 0) {
			fprintf(stderr, "no answer from the daemon after %ld updates\n", i + 1);
			return 1;
		}
	}
	if (sync_client_roundtrip(&s) < 0) {
		fprintf(stderr, "no answer from the daemon after the last update\n");
		return 1;
	}
	t1 = sync_client_now_ms();
	printf("DONE %.3f\n", (t1 - t0) / 1000.0);
	fflush(stdout);

	sync_client_disconnect(&s);
	pw_context_destroy(context);
	pw_main_loop_destroy(s.loop);
	pw_deinit();
	return 0;
}
