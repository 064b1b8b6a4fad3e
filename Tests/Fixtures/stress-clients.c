/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * audio-session-stress-clients: a test fixture. Reads one SPA-JSON property
 * object per line from standard input; for each, opens its own connection to
 * PipeWire (a client of its own) and creates one stream node with those
 * properties (an adapter around support.null-audio-sink, media.class
 * Stream/Output/Audio). Prints "ready N" once the daemon has handled every
 * request, then keeps the connections until SIGINT/SIGTERM.
 *
 * With `--rewrite N`, each client also rewrites its own client properties N
 * times with the line's properties (pw_core_update_properties), each time with
 * a new `audio.session.rewrite` value: a declaration rewritten in a burst.
 *
 * It exists because pw-cli handles one connection at a time and drops
 * requests it has not sent when its input ends; the hostile-input test needs
 * 1,000 clients quickly and reliably.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <spa/utils/result.h>
#include <pipewire/pipewire.h>

struct connection {
	struct pw_core *core;
	struct pw_proxy *node;
	struct spa_hook core_listener;
	int pending;
	int failed;
	struct state *state;
};

struct state {
	struct pw_main_loop *loop;
	struct pw_context *context;
	struct connection *connections;
	size_t n_connections;
	size_t n_done;
	size_t n_failed;
};

static void on_done(void *data, uint32_t id, int seq)
{
	struct connection *c = data;
	if (id != PW_ID_CORE || seq != c->pending)
		return;
	c->pending = -1;
	c->state->n_done++;
}

static void on_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct connection *c = data;
	fprintf(stderr, "connection error id:%u: %s (%s)\n", id, message, spa_strerror(res));
	c->failed = 1;
	c->state->n_failed++;
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

static void on_signal(void *data, int signal_number)
{
	struct state *s = data;
	pw_main_loop_quit(s->loop);
}

int main(int argc, char *argv[])
{
	struct state s = { 0 };
	struct rlimit rl;
	char *line = NULL;
	size_t cap = 0, n = 0, i;
	ssize_t len;
	double deadline;
	int res = 0, rewrites = 0, r;

	pw_init(&argc, &argv);
	if (argc == 3 && strcmp(argv[1], "--rewrite") == 0)
		rewrites = atoi(argv[2]);

	/* One socket per client: lift the soft limit on open files. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	s.loop = pw_main_loop_new(NULL);
	if (s.loop == NULL) {
		fprintf(stderr, "can't create main loop: %m\n");
		return 1;
	}
	pw_loop_add_signal(pw_main_loop_get_loop(s.loop), SIGINT, on_signal, &s);
	pw_loop_add_signal(pw_main_loop_get_loop(s.loop), SIGTERM, on_signal, &s);
	s.context = pw_context_new(pw_main_loop_get_loop(s.loop), NULL, 0);
	if (s.context == NULL) {
		fprintf(stderr, "can't create context: %m\n");
		return 1;
	}

	while ((len = getline(&line, &cap, stdin)) > 0) {
		struct pw_properties *props;
		struct connection *c, *grown;

		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (line[0] == '\0')
			continue;
		if (n == s.n_connections) {
			size_t want = n ? n * 2 : 64;
			grown = realloc(s.connections, want * sizeof(*grown));
			if (grown == NULL) {
				fprintf(stderr, "out of memory\n");
				return 1;
			}
			s.connections = grown;
			s.n_connections = want;
		}
		c = &s.connections[n];
		memset(c, 0, sizeof(*c));
		c->state = &s;

		props = pw_properties_new_string(line);
		if (props == NULL) {
			fprintf(stderr, "line %zu: not a property object\n", n + 1);
			return 2;
		}
		pw_properties_set(props, "factory.name", "support.null-audio-sink");
		pw_properties_set(props, PW_KEY_MEDIA_CLASS, "Stream/Output/Audio");
		pw_properties_set(props, PW_KEY_OBJECT_LINGER, "false");

		c->core = pw_context_connect(s.context,
				pw_properties_new(PW_KEY_APP_NAME, "audio-session-stress-clients", NULL), 0);
		if (c->core == NULL) {
			fprintf(stderr, "connection %zu: can't connect: %m\n", n + 1);
			pw_properties_free(props);
			return 1;
		}
		pw_core_add_listener(c->core, &c->core_listener, &core_events, c);
		c->node = pw_core_create_object(c->core, "adapter", PW_TYPE_INTERFACE_Node,
				PW_VERSION_NODE, &props->dict, 0);
		pw_properties_free(props);
		for (r = 0; r < rewrites; r++) {
			struct pw_properties *own = pw_properties_new_string(line);
			if (own == NULL)
				break;
			pw_properties_setf(own, "audio.session.rewrite", "%d", r);
			pw_core_update_properties(c->core, &own->dict);
			pw_properties_free(own);
		}
		c->pending = pw_core_sync(c->core, PW_ID_CORE, 0);
		n++;
		/* One client at a time: wait until the daemon has handled this one. */
		deadline = now_seconds() + 10.0;
		while (c->pending != -1 && c->failed == 0 && now_seconds() < deadline)
			pw_loop_iterate(pw_main_loop_get_loop(s.loop), 100);
		if (c->pending != -1) {
			fprintf(stderr, "connection %zu: no answer from the daemon\n", n);
			s.n_failed++;
		}
	}
	free(line);
	s.n_connections = n;
	printf("ready %zu answered %zu failed %zu\n", n, s.n_done, s.n_failed);
	fflush(stdout);

	pw_main_loop_run(s.loop);

	for (i = 0; i < n; i++) {
		spa_hook_remove(&s.connections[i].core_listener);
		if (s.connections[i].node)
			pw_proxy_destroy(s.connections[i].node);
		pw_core_disconnect(s.connections[i].core);
	}
	free(s.connections);
	pw_context_destroy(s.context);
	pw_main_loop_destroy(s.loop);
	pw_deinit();
	return res;
}
