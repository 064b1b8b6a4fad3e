/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * audio-session-fake-jack: a test fixture. A sound card with a headphone jack,
 * headless. It exports an SPA Device to PipeWire (the way WirePlumber exports
 * every ALSA card) with two output routes on profile device 0, "headphones"
 * and "speaker", and creates the card's sink: a null-audio-sink whose node
 * carries `device.id` and `card.profile.device=0`, like an ALSA PCM node.
 *
 * Commands, one per line on standard input:
 *   unplug    the headphone jack goes away: the headphone route becomes
 *             unavailable and the active route switches to the speaker
 *             (what ACP with auto-port, or WirePlumber right after, does)
 *   plug      the jack comes back: available again, active route headphones
 *   speaker   the user selects the speaker port while the jack stays in
 *   headphones the user selects the headphone port again
 *   quit
 * SIGUSR1 is "unplug" and SIGUSR2 "plug", for drivers that keep no pipe to it.
 * Every command is answered "ok COMMAND" once the daemon has the new state
 * (after a core sync). The first line printed is "ready device=ID" once the
 * sink exists. Route changes requested over PipeWire (Route set_param, e.g.
 * from WirePlumber or pavucontrol) are applied too, and each request is
 * printed as "route NAME set" when it arrives. WirePlumber (0.4 and 0.5)
 * answers every change of the active route with such a request, restoring
 * the new route's volume: a driver that waits for it knows the session
 * manager is done with the change and will not set a stale route later.
 *
 * Usage: audio-session-fake-jack [NODE-NAME]   (default "fake-jack")
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spa/monitor/device.h>
#include <spa/monitor/utils.h>
#include <spa/param/param.h>
#include <spa/param/route.h>
#include <spa/pod/builder.h>
#include <spa/pod/parser.h>
#include <spa/utils/hook.h>
#include <spa/utils/result.h>
#include <pipewire/pipewire.h>

enum { ROUTE_HEADPHONES, ROUTE_SPEAKER, N_ROUTES };

static const struct {
	const char *name, *description, *port_type;
	int priority;
} routes[N_ROUTES] = {
	[ROUTE_HEADPHONES] = { "analog-output-headphones", "Headphones", "headphones", 200 },
	[ROUTE_SPEAKER] = { "analog-output-speaker", "Speakers", "speaker", 100 },
};

enum { PARAM_ENUM_ROUTE, PARAM_ROUTE, N_PARAMS };

struct fixture {
	struct pw_main_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;

	struct spa_device device;
	struct spa_hook_list hooks;
	struct spa_param_info params[N_PARAMS];
	bool jack_in;
	int active;

	struct pw_proxy *device_proxy;
	struct spa_hook device_proxy_listener;
	uint32_t device_id;
	struct pw_proxy *node_proxy;
	struct spa_hook node_proxy_listener;
	const char *node_name;
	char pending_reply[160];
	int pending_seq;
};

static struct spa_pod *build_route(struct spa_pod_builder *b, uint32_t id, int index, bool with_device,
		bool available)
{
	struct spa_pod_frame f[2];

	spa_pod_builder_push_object(b, &f[0], SPA_TYPE_OBJECT_ParamRoute, id);
	spa_pod_builder_add(b,
			SPA_PARAM_ROUTE_index, SPA_POD_Int(index),
			SPA_PARAM_ROUTE_direction, SPA_POD_Id(SPA_DIRECTION_OUTPUT),
			SPA_PARAM_ROUTE_name, SPA_POD_String(routes[index].name),
			SPA_PARAM_ROUTE_description, SPA_POD_String(routes[index].description),
			SPA_PARAM_ROUTE_priority, SPA_POD_Int(routes[index].priority),
			SPA_PARAM_ROUTE_available, SPA_POD_Id(available ? SPA_PARAM_AVAILABILITY_yes :
				SPA_PARAM_AVAILABILITY_no),
			0);
	if (with_device)
		spa_pod_builder_add(b, SPA_PARAM_ROUTE_device, SPA_POD_Int(0), 0);
	/* Like ACP: the port's properties as a struct of n, then key/value strings. */
	spa_pod_builder_prop(b, SPA_PARAM_ROUTE_info, 0);
	spa_pod_builder_push_struct(b, &f[1]);
	spa_pod_builder_int(b, 1);
	spa_pod_builder_string(b, "port.type");
	spa_pod_builder_string(b, routes[index].port_type);
	spa_pod_builder_pop(b, &f[1]);
	return spa_pod_builder_pop(b, &f[0]);
}

static bool route_available(struct fixture *fx, int index)
{
	return index != ROUTE_HEADPHONES || fx->jack_in;
}

static void emit_info(struct fixture *fx, bool full)
{
	struct spa_device_info info = SPA_DEVICE_INFO_INIT();
	struct spa_dict_item items[] = {
		{ "device.name", "fake-jack-card" },
		{ "device.description", "Fake Jack Card" },
		{ "device.api", "audio-session-test" },
		{ "media.class", "Audio/Device" },
	};
	struct spa_dict props = SPA_DICT_INIT_ARRAY(items);

	info.change_mask = SPA_DEVICE_CHANGE_MASK_PARAMS;
	if (full) {
		info.change_mask |= SPA_DEVICE_CHANGE_MASK_PROPS;
		info.props = &props;
	}
	info.params = fx->params;
	info.n_params = N_PARAMS;
	spa_device_emit_info(&fx->hooks, &info);
}

/** The routes changed: bump the params' serial so the daemon reads them again. */
static void routes_changed(struct fixture *fx)
{
	fx->params[PARAM_ENUM_ROUTE].flags ^= SPA_PARAM_INFO_SERIAL;
	fx->params[PARAM_ROUTE].flags ^= SPA_PARAM_INFO_SERIAL;
	emit_info(fx, false);
}

static int impl_add_listener(void *object, struct spa_hook *listener,
		const struct spa_device_events *events, void *data)
{
	struct fixture *fx = object;
	struct spa_hook_list save;

	spa_hook_list_isolate(&fx->hooks, &save, listener, events, data);
	emit_info(fx, true);
	spa_hook_list_join(&fx->hooks, &save);
	return 0;
}

static int impl_sync(void *object, int seq)
{
	struct fixture *fx = object;
	spa_device_emit_result(&fx->hooks, seq, 0, 0, NULL);
	return 0;
}

static int impl_enum_params(void *object, int seq, uint32_t id, uint32_t start, uint32_t num,
		const struct spa_pod *filter)
{
	struct fixture *fx = object;
	struct spa_result_device_params result;
	uint8_t buffer[1024];
	struct spa_pod_builder b;
	uint32_t count = 0, index;

	if (num == 0)
		num = UINT32_MAX;
	result.id = id;
	for (index = start; count < num; index++) {
		spa_pod_builder_init(&b, buffer, sizeof(buffer));
		if (id == SPA_PARAM_EnumRoute && index < N_ROUTES)
			result.param = build_route(&b, id, (int) index, false, route_available(fx, (int) index));
		else if (id == SPA_PARAM_Route && index == 0)
			result.param = build_route(&b, id, fx->active, true, route_available(fx, fx->active));
		else
			break;
		result.index = index;
		result.next = index + 1;
		spa_device_emit_result(&fx->hooks, seq, 0, SPA_RESULT_TYPE_DEVICE_PARAMS, &result);
		count++;
	}
	return 0;
}

static int impl_set_param(void *object, uint32_t id, uint32_t flags, const struct spa_pod *param)
{
	struct fixture *fx = object;
	int index = -1, device = -1;

	if (id != SPA_PARAM_Route || param == NULL)
		return -ENOTSUP;
	if (spa_pod_parse_object(param, SPA_TYPE_OBJECT_ParamRoute, NULL,
			SPA_PARAM_ROUTE_index, SPA_POD_Int(&index),
			SPA_PARAM_ROUTE_device, SPA_POD_Int(&device)) < 0)
		return -EINVAL;
	if (index < 0 || index >= N_ROUTES || device != 0)
		return -EINVAL;
	printf("route %s set\n", routes[index].name);
	fflush(stdout);
	if (index != fx->active) {
		fx->active = index;
		routes_changed(fx);
	}
	return 0;
}

static const struct spa_device_methods device_methods = {
	SPA_VERSION_DEVICE_METHODS,
	.add_listener = impl_add_listener,
	.sync = impl_sync,
	.enum_params = impl_enum_params,
	.set_param = impl_set_param,
};

/* ---- the daemon's side ----------------------------------------------------- */

static void reply_after_sync(struct fixture *fx, const char *what)
{
	snprintf(fx->pending_reply, sizeof(fx->pending_reply), "%s", what);
	fx->pending_seq = pw_core_sync(fx->core, PW_ID_CORE, 0);
}

static void on_core_done(void *data, uint32_t id, int seq)
{
	struct fixture *fx = data;
	if (id != PW_ID_CORE || seq != fx->pending_seq || fx->pending_reply[0] == '\0')
		return;
	printf("%s\n", fx->pending_reply);
	fflush(stdout);
	fx->pending_reply[0] = '\0';
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct fixture *fx = data;
	fprintf(stderr, "error id:%u: %s (%s)\n", id, message, spa_strerror(res));
	if (id == PW_ID_CORE)
		pw_main_loop_quit(fx->loop);
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = on_core_done,
	.error = on_core_error,
};

static void on_node_bound(void *data, uint32_t global_id)
{
	struct fixture *fx = data;
	char reply[64];
	snprintf(reply, sizeof(reply), "ready device=%u", fx->device_id);
	reply_after_sync(fx, reply);
}

static const struct pw_proxy_events node_proxy_events = {
	PW_VERSION_PROXY_EVENTS,
	.bound = on_node_bound,
};

static void on_device_bound(void *data, uint32_t global_id)
{
	struct fixture *fx = data;
	struct pw_properties *props;

	if (fx->node_proxy != NULL)
		return;
	fx->device_id = global_id;
	props = pw_properties_new(
			"factory.name", "support.null-audio-sink",
			PW_KEY_NODE_NAME, fx->node_name,
			PW_KEY_NODE_DESCRIPTION, "Fake Jack Card Analog Stereo",
			PW_KEY_MEDIA_CLASS, "Audio/Sink",
			"audio.position", "[ FL FR ]",
			"card.profile.device", "0",
			NULL);
	if (props == NULL) {
		perror("properties");
		pw_main_loop_quit(fx->loop);
		return;
	}
	pw_properties_setf(props, PW_KEY_DEVICE_ID, "%u", global_id);
	fx->node_proxy = pw_core_create_object(fx->core, "adapter", PW_TYPE_INTERFACE_Node,
			PW_VERSION_NODE, &props->dict, 0);
	pw_properties_free(props);
	if (fx->node_proxy == NULL) {
		perror("create sink");
		pw_main_loop_quit(fx->loop);
		return;
	}
	pw_proxy_add_listener(fx->node_proxy, &fx->node_proxy_listener, &node_proxy_events, fx);
}

static const struct pw_proxy_events device_proxy_events = {
	PW_VERSION_PROXY_EVENTS,
	.bound = on_device_bound,
};

/** Applies one command; false (and a message) for an unknown or impossible one. */
static bool apply_command(struct fixture *fx, const char *cmd)
{
	if (strcmp(cmd, "unplug") == 0) {
		fx->jack_in = false;
		fx->active = ROUTE_SPEAKER;
	} else if (strcmp(cmd, "plug") == 0) {
		fx->jack_in = true;
		fx->active = ROUTE_HEADPHONES;
	} else if (strcmp(cmd, "speaker") == 0) {
		fx->active = ROUTE_SPEAKER;
	} else if (strcmp(cmd, "headphones") == 0) {
		if (!fx->jack_in) {
			printf("error headphones: the jack is out\n");
			return false;
		}
		fx->active = ROUTE_HEADPHONES;
	} else {
		printf("error unknown command '%s' (unplug, plug, speaker, headphones, quit)\n", cmd);
		return false;
	}
	routes_changed(fx);
	char reply[140];
	snprintf(reply, sizeof(reply), "ok %s", cmd);
	reply_after_sync(fx, reply);
	return true;
}

static void on_stdin(void *data, int fd, uint32_t mask)
{
	struct fixture *fx = data;
	char line[128];
	ssize_t n;
	char *nl;

	if (mask & (SPA_IO_ERR | SPA_IO_HUP) && !(mask & SPA_IO_IN)) {
		pw_main_loop_quit(fx->loop);
		return;
	}
	n = read(fd, line, sizeof(line) - 1);
	if (n <= 0) {
		pw_main_loop_quit(fx->loop);
		return;
	}
	line[n] = '\0';
	/* One command per read is enough for a driver that waits for "ok". */
	if ((nl = strchr(line, '\n')) != NULL)
		*nl = '\0';
	if (strcmp(line, "quit") == 0)
		pw_main_loop_quit(fx->loop);
	else
		apply_command(fx, line);
}

/* SIGUSR1 unplugs, SIGUSR2 plugs: for drivers that don't hold our stdin. */
static void on_usr(void *data, int signal_number)
{
	apply_command(data, signal_number == SIGUSR1 ? "unplug" : "plug");
}

static void on_signal(void *data, int signal_number)
{
	struct fixture *fx = data;
	pw_main_loop_quit(fx->loop);
}

int main(int argc, char *argv[])
{
	struct fixture fx = { 0 };
	struct pw_loop *loop;
	struct pw_properties *props;

	pw_init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	fx.node_name = argc > 1 ? argv[1] : "fake-jack";
	fx.jack_in = true;
	fx.active = ROUTE_HEADPHONES;
	fx.params[PARAM_ENUM_ROUTE] = SPA_PARAM_INFO(SPA_PARAM_EnumRoute, SPA_PARAM_INFO_READ);
	fx.params[PARAM_ROUTE] = SPA_PARAM_INFO(SPA_PARAM_Route, SPA_PARAM_INFO_READWRITE);
	spa_hook_list_init(&fx.hooks);
	fx.device.iface = SPA_INTERFACE_INIT(SPA_TYPE_INTERFACE_Device, SPA_VERSION_DEVICE,
			&device_methods, &fx);

	fx.loop = pw_main_loop_new(NULL);
	if (fx.loop == NULL) {
		perror("main loop");
		return 1;
	}
	loop = pw_main_loop_get_loop(fx.loop);
	pw_loop_add_signal(loop, SIGINT, on_signal, &fx);
	pw_loop_add_signal(loop, SIGTERM, on_signal, &fx);
	pw_loop_add_signal(loop, SIGUSR1, on_usr, &fx);
	pw_loop_add_signal(loop, SIGUSR2, on_usr, &fx);
	/* A closed or /dev/null stdin is fine: then signals drive it. */
	if (isatty(STDIN_FILENO) || lseek(STDIN_FILENO, 0, SEEK_CUR) < 0)
		pw_loop_add_io(loop, STDIN_FILENO, SPA_IO_IN | SPA_IO_ERR | SPA_IO_HUP, false, on_stdin, &fx);

	fx.context = pw_context_new(loop, NULL, 0);
	/* client.conf loads libpipewire-module-client-device, which exports devices. */
	if (fx.context == NULL) {
		perror("context");
		return 1;
	}
	fx.core = pw_context_connect(fx.context,
			pw_properties_new(PW_KEY_APP_NAME, "audio-session-fake-jack", NULL), 0);
	if (fx.core == NULL) {
		perror("connect");
		return 1;
	}
	pw_core_add_listener(fx.core, &fx.core_listener, &core_events, &fx);

	props = pw_properties_new(
			"device.name", "fake-jack-card",
			"device.description", "Fake Jack Card",
			"device.api", "audio-session-test",
			PW_KEY_MEDIA_CLASS, "Audio/Device",
			NULL);
	fx.device_proxy = pw_core_export(fx.core, SPA_TYPE_INTERFACE_Device,
			props ? &props->dict : NULL, &fx.device, 0);
	pw_properties_free(props);
	if (fx.device_proxy == NULL) {
		perror("export device");
		return 1;
	}
	pw_proxy_add_listener(fx.device_proxy, &fx.device_proxy_listener, &device_proxy_events, &fx);

	pw_main_loop_run(fx.loop);

	if (fx.node_proxy)
		pw_proxy_destroy(fx.node_proxy);
	pw_proxy_destroy(fx.device_proxy);
	pw_core_disconnect(fx.core);
	pw_context_destroy(fx.context);
	pw_main_loop_destroy(fx.loop);
	pw_deinit();
	return 0;
}
