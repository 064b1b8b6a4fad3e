/* PipeWire audio sessions */
/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <spa/param/audio/format-utils.h>
#include <spa/pod/builder.h>
#include <spa/utils/result.h>
#include <spa/utils/string.h>
#include <pipewire/pipewire.h>

#include "probes.h"

PW_LOG_TOPIC_EXTERN(mod_topic);
#define PW_LOG_TOPIC_DEFAULT mod_topic

/** -70 dBFS: a far end's quietest speech and its comfort noise are above it; the silence a
 * program plays while it only records is digital zero. */
#define AUDIBLE		3.1623e-4f
/** Output ports linked into one probe: enough channels to hear any of a stream's. */
#define MAX_LINKS	8

struct as_probe;

struct probe_link {
	struct as_probe *probe;
	struct pw_impl_link *link;	/**< NULL when the slot is free */
	struct spa_hook listener;
};

struct as_probe {
	struct spa_list link;
	struct as_probes *probes;
	uint32_t target_id;
	struct pw_impl_node *target;	/**< the stream listened to; NULL once it is gone */
	struct spa_hook target_listener;
	struct pw_stream *stream;
	struct spa_hook stream_listener;
	struct pw_impl_node *node;	/**< the probe's own node in the daemon, once known */
	struct spa_hook node_listener;
	struct probe_link links[MAX_LINKS];
	int heard;			/**< set on the data thread, read on the main loop */
	bool failed;			/**< can't listen: reported as heard */
	bool reported;
	bool dead;			/**< freed on the loop's next turn */
};

static void probes_signal(struct as_probes *probes)
{
	if (probes->event != NULL)
		pw_loop_signal_event(probes->loop, probes->event);
}

static void probe_fail(struct as_probe *p, const char *what, int res)
{
	pw_log_warn("probe of stream %u: %s: %s; its output counts as sound", p->target_id, what, spa_strerror(res));
	p->failed = true;
	probes_signal(p->probes);
}

/* ---- links into the probe ------------------------------------------------- */

static void link_destroy(void *data)
{
	struct probe_link *l = data;
	spa_hook_remove(&l->listener);
	l->link = NULL;
}

static const struct pw_impl_link_events link_events = {
	PW_VERSION_IMPL_LINK_EVENTS,
	.destroy = link_destroy,
};

static int first_port(void *data, struct pw_impl_port *port)
{
	struct pw_impl_port **out = data;
	*out = port;
	return 1;
}

struct link_request {
	struct as_probe *probe;
	struct pw_impl_port *input;
};

/** An audio output port of the watched stream (not a monitor, not control data). */
static bool is_audio_port(struct pw_impl_port *port)
{
	const struct pw_properties *props = pw_impl_port_get_properties(port);
	const char *dsp = props ? pw_properties_get(props, PW_KEY_FORMAT_DSP) : NULL;

	if (props == NULL || pw_properties_get_bool(props, PW_KEY_PORT_MONITOR, false))
		return false;
	return dsp != NULL && strstr(dsp, "audio") != NULL;
}

static int link_port(void *data, struct pw_impl_port *output)
{
	struct link_request *r = data;
	struct as_probe *p = r->probe;
	struct probe_link *free_slot = NULL;
	struct pw_impl_link *link;
	struct pw_properties *props;
	int res;

	if (!is_audio_port(output))
		return 0;
	for (size_t i = 0; i < MAX_LINKS; i++) {
		struct pw_impl_link *l = p->links[i].link;
		if (l == NULL) {
			if (free_slot == NULL)
				free_slot = &p->links[i];
		} else if (pw_impl_link_get_output(l) == output && pw_impl_link_get_input(l) == r->input) {
			return 0;	/* linked already */
		}
	}
	if (free_slot == NULL)
		return 1;
	/* Passive: the probe runs when the stream runs and never makes it run. */
	props = pw_properties_new(PW_KEY_LINK_PASSIVE, "true", NULL);
	if (props == NULL) {
		probe_fail(p, "link properties", -errno);
		return 1;
	}
	link = pw_context_create_link(p->probes->context, output, r->input, NULL, props, 0);
	if (link == NULL) {
		probe_fail(p, "link", -errno);
		return 1;
	}
	free_slot->probe = p;
	free_slot->link = link;
	pw_impl_link_add_listener(link, &free_slot->listener, &link_events, free_slot);
	if ((res = pw_impl_link_register(link, NULL)) < 0) {
		/* The slot keeps the link: it goes with the probe. */
		probe_fail(p, "link registration", res);
		return 1;
	}
	return 0;
}

/** Links every audio output port of the stream into the probe's input, once both exist.
 * Called whenever either gains a port: a format change renews the stream's ports. */
static void probe_link(struct as_probe *p)
{
	struct link_request r = { .probe = p, .input = NULL };

	if (p->dead || p->failed || p->target == NULL || p->node == NULL)
		return;
	pw_impl_node_for_each_port(p->node, PW_DIRECTION_INPUT, first_port, &r.input);
	if (r.input == NULL)
		return;
	pw_impl_node_for_each_port(p->target, PW_DIRECTION_OUTPUT, link_port, &r);
}

/* ---- the watched stream and the probe's node -------------------------------- */

static void target_destroy(void *data)
{
	struct as_probe *p = data;
	/* Its ports, and with them the links into the probe, go with it. */
	spa_hook_remove(&p->target_listener);
	p->target = NULL;
	p->dead = true;
	probes_signal(p->probes);
}

/* The stream or the probe gained a port: link what can be linked now. */
static void port_added(void *data, struct pw_impl_port *port)
{
	probe_link(data);
}

static const struct pw_impl_node_events target_events = {
	PW_VERSION_IMPL_NODE_EVENTS,
	.destroy = target_destroy,
	.port_added = port_added,
};

static void node_destroy(void *data)
{
	struct as_probe *p = data;
	spa_hook_remove(&p->node_listener);
	p->node = NULL;
}

static const struct pw_impl_node_events node_events = {
	PW_VERSION_IMPL_NODE_EVENTS,
	.destroy = node_destroy,
	.port_added = port_added,
};

/** The probe's node in the daemon: the server side of its own stream. */
static void probe_find_node(struct as_probe *p)
{
	uint32_t id;
	struct pw_global *global;

	if (p->node != NULL || p->stream == NULL)
		return;
	id = pw_stream_get_node_id(p->stream);
	if (id == SPA_ID_INVALID)
		return;
	global = pw_context_find_global(p->probes->context, id);
	if (global == NULL || !pw_global_is_type(global, PW_TYPE_INTERFACE_Node))
		return;
	p->node = pw_global_get_object(global);
	pw_impl_node_add_listener(p->node, &p->node_listener, &node_events, p);
}

/* ---- the probe's stream ---------------------------------------------------- */

static void stream_state_changed(void *data, enum pw_stream_state old,
		enum pw_stream_state state, const char *error)
{
	struct as_probe *p = data;

	pw_log_debug("probe of stream %u: %s", p->target_id, pw_stream_state_as_string(state));
	switch (state) {
	case PW_STREAM_STATE_ERROR:
		probe_fail(p, error ? error : "stream error", -EIO);
		break;
	case PW_STREAM_STATE_PAUSED:
	case PW_STREAM_STATE_STREAMING:
		probe_find_node(p);
		probe_link(p);
		break;
	default:
		break;
	}
}

/* The data thread: a sample above AUDIBLE is all that is looked for, and nothing is kept. */
static void stream_process(void *data)
{
	struct as_probe *p = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(p->stream);
	bool heard = false;

	if (b == NULL)
		return;
	if (!__atomic_load_n(&p->heard, __ATOMIC_ACQUIRE) && b->buffer->n_datas > 0) {
		struct spa_data *d = &b->buffer->datas[0];
		if (d->data != NULL && d->chunk != NULL) {
			uint32_t offset = SPA_MIN(d->chunk->offset, d->maxsize);
			uint32_t size = SPA_MIN(d->chunk->size, d->maxsize - offset);
			const float *s = SPA_PTROFF(d->data, offset, const float);
			for (uint32_t i = 0; i < size / sizeof(float); i++)
				if (fabsf(s[i]) > AUDIBLE) {
					heard = true;
					break;
				}
		}
	}
	pw_stream_queue_buffer(p->stream, b);
	if (heard) {
		__atomic_store_n(&p->heard, 1, __ATOMIC_RELEASE);
		probes_signal(p->probes);
	}
}

static const struct pw_stream_events stream_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = stream_state_changed,
	.process = stream_process,
};

/* ---- probes ------------------------------------------------------------------ */

static struct as_probe *find_probe(struct as_probes *probes, uint32_t node_id)
{
	struct as_probe *p;
	spa_list_for_each(p, &probes->probes, link)
		if (p->target_id == node_id && !p->dead)
			return p;
	return NULL;
}

static void probe_free(struct as_probe *p)
{
	spa_list_remove(&p->link);
	for (size_t i = 0; i < MAX_LINKS; i++) {
		struct pw_impl_link *link = p->links[i].link;
		if (link == NULL)
			continue;
		spa_hook_remove(&p->links[i].listener);
		p->links[i].link = NULL;
		pw_impl_link_destroy(link);
	}
	if (p->node != NULL)
		spa_hook_remove(&p->node_listener);
	if (p->target != NULL)
		spa_hook_remove(&p->target_listener);
	if (p->stream != NULL) {
		spa_hook_remove(&p->stream_listener);
		pw_stream_destroy(p->stream);
	}
	free(p);
}

/* The loop's turn after a probe heard sound, failed or was stopped: never from inside an
 * effect, so the core is told from outside its own decisions. */
static void on_event(void *data, uint64_t count)
{
	struct as_probes *probes = data;
	struct as_probe *p, *t;

	spa_list_for_each_safe(p, t, &probes->probes, link)
		if (p->dead)
			probe_free(p);
again:
	spa_list_for_each(p, &probes->probes, link) {
		if (p->dead || p->reported)
			continue;
		if (!p->failed && !__atomic_load_n(&p->heard, __ATOMIC_ACQUIRE))
			continue;
		p->reported = true;
		pw_log_info("stream %u %s", p->target_id, p->failed ? "can't be listened to" : "carries sound");
		if (probes->on_heard != NULL)
			probes->on_heard(probes->data, p->target_id);
		/* The core may have started or stopped probes: look again from the start. */
		goto again;
	}
}

static struct pw_core *probes_core(struct as_probes *probes)
{
	if (probes->core == NULL)
		probes->core = pw_context_connect_self(probes->context,
				pw_properties_new(PW_KEY_CLIENT_NAME, "audio-session level probes", NULL), 0);
	return probes->core;
}

void as_probe_start(struct as_probes *probes, struct pw_impl_node *node, uint32_t node_id)
{
	uint8_t buffer[512];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	const struct spa_pod *params[1];
	/* The graph's rate: the probe's ports then need no resampling (and a port config
	 * is only made from a format with a rate). */
	struct spa_audio_info_raw info = {
		.format = SPA_AUDIO_FORMAT_F32P,
		.rate = pw_properties_get_uint32(pw_context_get_properties(probes->context), "default.clock.rate", 48000),
		.channels = 1,
	};
	struct pw_properties *props;
	struct pw_core *core;
	struct as_probe *p;
	int res;

	if (find_probe(probes, node_id) != NULL)
		return;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		pw_log_error("probe of stream %u: %m", node_id);
		return;
	}
	p->probes = probes;
	p->target_id = node_id;
	p->target = node;
	spa_list_append(&probes->probes, &p->link);
	pw_impl_node_add_listener(node, &p->target_listener, &target_events, p);

	if ((core = probes_core(probes)) == NULL) {
		probe_fail(p, "connection", -errno);
		return;
	}
	/* A media class of its own: no session manager links it, no PulseAudio client lists
	 * it as a recording, and the module does not take it for a stream. Its ports are
	 * configured here, not by a session manager. */
	props = pw_properties_new(
			PW_KEY_MEDIA_TYPE, "Audio",
			PW_KEY_MEDIA_CATEGORY, "Capture",
			PW_KEY_MEDIA_CLASS, AS_PROBE_MEDIA_CLASS,
			PW_KEY_NODE_NAME, "audio-session.probe",
			PW_KEY_NODE_DESCRIPTION, "Audio session level probe",
			PW_KEY_NODE_PASSIVE, "true",
			PW_KEY_NODE_AUTOCONNECT, "false",
			PW_KEY_NODE_DONT_RECONNECT, "true",
			"adapter.auto-port-config", "{ mode = dsp monitor = false control = false position = preserve }",
			NULL);
	if (props == NULL) {
		probe_fail(p, "properties", -errno);
		return;
	}
	pw_properties_setf(props, "audio-session.probe.target", "%u", node_id);
	p->stream = pw_stream_new(core, "audio-session probe", props);
	if (p->stream == NULL) {
		probe_fail(p, "stream", -errno);
		return;
	}
	pw_stream_add_listener(p->stream, &p->stream_listener, &stream_events, p);
	info.position[0] = SPA_AUDIO_CHANNEL_MONO;
	params[0] = spa_format_audio_raw_build(&b, SPA_PARAM_EnumFormat, &info);
	res = pw_stream_connect(p->stream, PW_DIRECTION_INPUT, PW_ID_ANY,
			PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params, 1);
	if (res < 0)
		probe_fail(p, "connect", res);
}

void as_probe_stop(struct as_probes *probes, uint32_t node_id)
{
	struct as_probe *p = find_probe(probes, node_id);
	if (p == NULL)
		return;
	p->dead = true;
	probes_signal(probes);
}

int as_probes_init(struct as_probes *probes, struct pw_context *context,
		void (*on_heard)(void *data, uint32_t node_id), void *data)
{
	spa_zero(*probes);
	probes->context = context;
	probes->loop = pw_context_get_main_loop(context);
	probes->on_heard = on_heard;
	probes->data = data;
	spa_list_init(&probes->probes);
	probes->event = pw_loop_add_event(probes->loop, on_event, probes);
	return probes->event == NULL ? -errno : 0;
}

void as_probes_clear(struct as_probes *probes)
{
	struct as_probe *p;

	if (probes->loop == NULL)
		return;
	spa_list_consume(p, &probes->probes, link)
		probe_free(p);
	if (probes->event != NULL)
		pw_loop_destroy_source(probes->loop, probes->event);
	probes->event = NULL;
	if (probes->core != NULL)
		pw_core_disconnect(probes->core);
	probes->core = NULL;
}
