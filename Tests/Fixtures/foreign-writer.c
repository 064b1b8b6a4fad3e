/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * audio-session-foreign-writer: a test fixture. `audio-session-foreign-writer ID
 * KEY VALUE` binds the client object ID (another connection) and writes KEY=VALUE
 * into its properties with pw_client_update_properties, as any client with write
 * permission on that object can. Prints "written" once the daemon has handled it;
 * exits 0, or 1 when the object is not found or the daemon refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spa/utils/result.h>
#include <spa/utils/string.h>
#include <pipewire/pipewire.h>

struct state {
	struct pw_main_loop *loop;
	struct pw_core *core;
	struct pw_registry *registry;
	struct pw_client *client;
	struct spa_hook core_listener, registry_listener;
	uint32_t target;
	const char *key, *value;
	int pending, written, failed;
};

static void registry_global(void *data, uint32_t id, uint32_t permissions, const char *type,
		uint32_t version, const struct spa_dict *props)
{
	struct state *s = data;
	if (id != s->target || !spa_streq(type, PW_TYPE_INTERFACE_Client) || s->client != NULL)
		return;
	s->client = pw_registry_bind(s->registry, id, type, PW_VERSION_CLIENT, 0);
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS,
	.global = registry_global,
};

static void core_done(void *data, uint32_t id, int seq)
{
	struct state *s = data;
	if (id != PW_ID_CORE || seq != s->pending)
		return;
	if (s->client == NULL || s->written) {
		pw_main_loop_quit(s->loop);
		return;
	}
	struct spa_dict_item items[] = { SPA_DICT_ITEM_INIT(s->key, s->value) };
	pw_client_update_properties(s->client, &SPA_DICT_INIT_ARRAY(items));
	s->written = 1;
	s->pending = pw_core_sync(s->core, PW_ID_CORE, 0);
}

static void core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct state *s = data;
	fprintf(stderr, "error id:%u: %s (%s)\n", id, message, spa_strerror(res));
	s->failed = 1;
	pw_main_loop_quit(s->loop);
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = core_done,
	.error = core_error,
};

int main(int argc, char *argv[])
{
	struct state s = { 0 };
	struct pw_context *context;

	pw_init(&argc, &argv);
	if (argc != 4) {
		fprintf(stderr, "usage: %s CLIENT-ID KEY VALUE\n", argv[0]);
		return 2;
	}
	s.target = (uint32_t) strtoul(argv[1], NULL, 10);
	s.key = argv[2];
	s.value = argv[3];
	s.loop = pw_main_loop_new(NULL);
	context = pw_context_new(pw_main_loop_get_loop(s.loop), NULL, 0);
	if (s.loop == NULL || context == NULL || (s.core = pw_context_connect(context, NULL, 0)) == NULL) {
		fprintf(stderr, "can't connect: %m\n");
		return 1;
	}
	pw_core_add_listener(s.core, &s.core_listener, &core_events, &s);
	s.registry = pw_core_get_registry(s.core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(s.registry, &s.registry_listener, &registry_events, &s);
	s.pending = pw_core_sync(s.core, PW_ID_CORE, 0);
	pw_main_loop_run(s.loop);

	if (s.written && !s.failed)
		printf("written\n");
	else if (!s.failed)
		fprintf(stderr, "client %u not found\n", s.target);
	if (s.client)
		pw_proxy_destroy((struct pw_proxy *) s.client);
	pw_proxy_destroy((struct pw_proxy *) s.registry);
	pw_core_disconnect(s.core);
	pw_context_destroy(context);
	pw_main_loop_destroy(s.loop);
	pw_deinit();
	return s.written && !s.failed ? 0 : 1;
}
