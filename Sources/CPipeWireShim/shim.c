#include "cpipewire_shim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <spa/param/audio/format-utils.h>
#include <spa/pod/builder.h>
#include <spa/utils/dict.h>

const uint32_t aspw_id_invalid = SPA_ID_INVALID;
const int aspw_epipe = EPIPE;

struct aspw_hook {
	struct spa_hook hook;
	void *data;
	union {
		struct pw_core_events core;
		struct pw_registry_events registry;
		struct pw_metadata_events metadata;
		struct pw_proxy_events proxy;
		struct pw_stream_events stream;
		struct pw_node_events node;
	} events;
	aspw_core_done_fn core_done;
	aspw_core_error_fn core_error;
	aspw_global_fn global;
	aspw_global_remove_fn global_remove;
	aspw_property_fn property;
	aspw_proxy_removed_fn proxy_removed;
	aspw_node_info_fn node_info;
	aspw_render_fn render;
	aspw_stream_state_fn stream_state;
	struct pw_stream *stream;
	uint32_t channels;
	bool capture;
};

static aspw_hook *hook_new(void *data)
{
	aspw_hook *h = calloc(1, sizeof(*h));
	if (h != NULL)
		h->data = data;
	return h;
}

void aspw_hook_free(aspw_hook *h)
{
	if (h == NULL)
		return;
	spa_hook_remove(&h->hook);
	free(h);
}

/* core */

static void on_core_done(void *data, uint32_t id, int seq)
{
	aspw_hook *h = data;
	if (h->core_done)
		h->core_done(h->data, id, seq);
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	aspw_hook *h = data;
	if (h->core_error)
		h->core_error(h->data, id, seq, res, message);
}

aspw_hook *aspw_core_add_listener(struct pw_core *core, aspw_core_done_fn done, aspw_core_error_fn error, void *data)
{
	aspw_hook *h = hook_new(data);
	if (h == NULL)
		return NULL;
	h->core_done = done;
	h->core_error = error;
	h->events.core = (struct pw_core_events) {
		.version = PW_VERSION_CORE_EVENTS,
		.done = on_core_done,
		.error = on_core_error,
	};
	pw_core_add_listener(core, &h->hook, &h->events.core, h);
	return h;
}

int aspw_core_sync(struct pw_core *core, int seq)
{
	return pw_core_sync(core, PW_ID_CORE, seq);
}

struct pw_registry *aspw_core_get_registry(struct pw_core *core)
{
	return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}

int aspw_core_update_properties(struct pw_core *core, const struct pw_properties *props)
{
	return pw_core_update_properties(core, &props->dict);
}

uint32_t aspw_core_client_id(struct pw_core *core)
{
	struct pw_client *client = pw_core_get_client(core);
	if (client == NULL)
		return SPA_ID_INVALID;
	return pw_proxy_get_bound_id((struct pw_proxy *)client);
}

/* registry */

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
		      const struct spa_dict *props)
{
	aspw_hook *h = data;
	if (h->global)
		h->global(h->data, id, permissions, type, version, props);
}

static void on_global_remove(void *data, uint32_t id)
{
	aspw_hook *h = data;
	if (h->global_remove)
		h->global_remove(h->data, id);
}

aspw_hook *aspw_registry_add_listener(struct pw_registry *registry, aspw_global_fn global,
				      aspw_global_remove_fn global_remove, void *data)
{
	aspw_hook *h = hook_new(data);
	if (h == NULL)
		return NULL;
	h->global = global;
	h->global_remove = global_remove;
	h->events.registry = (struct pw_registry_events) {
		.version = PW_VERSION_REGISTRY_EVENTS,
		.global = on_global,
		.global_remove = on_global_remove,
	};
	pw_registry_add_listener(registry, &h->hook, &h->events.registry, h);
	return h;
}

struct pw_proxy *aspw_registry_bind(struct pw_registry *registry, uint32_t id, const char *type, uint32_t version)
{
	return pw_registry_bind(registry, id, type, version, 0);
}

/* metadata */

static int on_property(void *data, uint32_t subject, const char *key, const char *type, const char *value)
{
	aspw_hook *h = data;
	if (h->property)
		return h->property(h->data, subject, key, type, value);
	return 0;
}

aspw_hook *aspw_metadata_add_listener(struct pw_proxy *metadata, aspw_property_fn property, void *data)
{
	aspw_hook *h = hook_new(data);
	if (h == NULL)
		return NULL;
	h->property = property;
	h->events.metadata = (struct pw_metadata_events) {
		.version = PW_VERSION_METADATA_EVENTS,
		.property = on_property,
	};
	pw_metadata_add_listener((struct pw_metadata *)metadata, &h->hook, &h->events.metadata, h);
	return h;
}

int aspw_metadata_set_property(struct pw_proxy *metadata, uint32_t subject, const char *key, const char *type, const char *value)
{
	return pw_metadata_set_property((struct pw_metadata *)metadata, subject, key, type, value);
}

/* proxy */

static void on_proxy_removed(void *data)
{
	aspw_hook *h = data;
	if (h->proxy_removed)
		h->proxy_removed(h->data);
}

aspw_hook *aspw_proxy_add_listener(struct pw_proxy *proxy, aspw_proxy_removed_fn removed, void *data)
{
	aspw_hook *h = hook_new(data);
	if (h == NULL)
		return NULL;
	h->proxy_removed = removed;
	h->events.proxy = (struct pw_proxy_events) {
		.version = PW_VERSION_PROXY_EVENTS,
		.removed = on_proxy_removed,
	};
	pw_proxy_add_listener(proxy, &h->hook, &h->events.proxy, h);
	return h;
}

/* node */

static void on_node_info(void *data, const struct pw_node_info *info)
{
	aspw_hook *h = data;
	if (h->node_info && info != NULL)
		h->node_info(h->data, info->props);
}

aspw_hook *aspw_node_add_listener(struct pw_proxy *node, aspw_node_info_fn info, void *data)
{
	aspw_hook *h = hook_new(data);
	if (h == NULL)
		return NULL;
	h->node_info = info;
	h->events.node = (struct pw_node_events) {
		.version = PW_VERSION_NODE_EVENTS,
		.info = on_node_info,
	};
	pw_node_add_listener((struct pw_node *)node, &h->hook, &h->events.node, h);
	return h;
}

/* dict */

const char *aspw_dict_lookup(const struct spa_dict *dict, const char *key)
{
	return dict ? spa_dict_lookup(dict, key) : NULL;
}

uint32_t aspw_dict_count(const struct spa_dict *dict)
{
	return dict ? dict->n_items : 0;
}

const char *aspw_dict_key(const struct spa_dict *dict, uint32_t index)
{
	return (dict && index < dict->n_items) ? dict->items[index].key : NULL;
}

const char *aspw_dict_value(const struct spa_dict *dict, uint32_t index)
{
	return (dict && index < dict->n_items) ? dict->items[index].value : NULL;
}

/* stream */

static void on_stream_process(void *data)
{
	aspw_hook *h = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(h->stream);
	if (b == NULL)
		return;
	struct spa_buffer *buf = b->buffer;
	float *dst = buf->datas[0].data;
	if (dst == NULL || h->channels == 0) {
		pw_stream_queue_buffer(h->stream, b);
		return;
	}
	uint32_t stride = sizeof(float) * h->channels;
	if (h->capture) {
		/* What was captured: the chunk, bounded by the buffer. */
		struct spa_chunk *c = buf->datas[0].chunk;
		uint32_t maxsize = buf->datas[0].maxsize;
		uint32_t offset = c->offset < maxsize ? c->offset : maxsize;
		uint32_t size = c->size < maxsize - offset ? c->size : maxsize - offset;
		uint32_t frames = size / stride;
		if (frames > 0 && h->render)
			h->render(h->data, (float *) SPA_PTROFF(dst, offset, void), frames, h->channels);
		pw_stream_queue_buffer(h->stream, b);
		return;
	}
	uint32_t max_frames = buf->datas[0].maxsize / stride;
	if (b->requested > 0 && b->requested < max_frames)
		max_frames = b->requested;
	uint32_t frames = h->render ? h->render(h->data, dst, max_frames, h->channels) : 0;
	if (frames > max_frames)
		frames = max_frames;
	if (frames == 0) {
		/* Nothing to play right now: a silent period keeps the graph fed. */
		frames = max_frames < 256 ? max_frames : 256;
		memset(dst, 0, (size_t)frames * stride);
	}
	buf->datas[0].chunk->offset = 0;
	buf->datas[0].chunk->stride = stride;
	buf->datas[0].chunk->size = frames * stride;
	pw_stream_queue_buffer(h->stream, b);
}

static void on_stream_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
	aspw_hook *h = data;
	if (h->stream_state)
		h->stream_state(h->data, (int)old, (int)state, error);
}

aspw_hook *aspw_stream_add_listener(struct pw_stream *stream, aspw_render_fn render,
				    aspw_stream_state_fn state_changed, uint32_t channels, void *data)
{
	aspw_hook *h = hook_new(data);
	if (h == NULL)
		return NULL;
	h->stream = stream;
	h->render = render;
	h->stream_state = state_changed;
	h->channels = channels;
	h->events.stream = (struct pw_stream_events) {
		.version = PW_VERSION_STREAM_EVENTS,
		.state_changed = on_stream_state,
		.process = on_stream_process,
	};
	pw_stream_add_listener(stream, &h->hook, &h->events.stream, h);
	return h;
}

aspw_hook *aspw_stream_add_capture_listener(struct pw_stream *stream, aspw_render_fn render,
					    aspw_stream_state_fn state_changed, uint32_t channels, void *data)
{
	aspw_hook *h = aspw_stream_add_listener(stream, render, state_changed, channels, data);
	if (h != NULL)
		h->capture = true;
	return h;
}

static int stream_connect(struct pw_stream *stream, enum pw_direction direction, uint32_t rate,
			  uint32_t channels, bool active);

int aspw_stream_connect_playback(struct pw_stream *stream, uint32_t rate, uint32_t channels, bool active)
{
	return stream_connect(stream, PW_DIRECTION_OUTPUT, rate, channels, active);
}

int aspw_stream_connect_capture(struct pw_stream *stream, uint32_t rate, uint32_t channels, bool active)
{
	return stream_connect(stream, PW_DIRECTION_INPUT, rate, channels, active);
}

static int stream_connect(struct pw_stream *stream, enum pw_direction direction, uint32_t rate,
			  uint32_t channels, bool active)
{
	uint8_t buffer[1024];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	const struct spa_pod *params[1];
	struct spa_audio_info_raw info = SPA_AUDIO_INFO_RAW_INIT(.format = SPA_AUDIO_FORMAT_F32,
								 .channels = channels, .rate = rate);
	if (channels == 2) {
		info.position[0] = SPA_AUDIO_CHANNEL_FL;
		info.position[1] = SPA_AUDIO_CHANNEL_FR;
	} else if (channels == 1) {
		info.position[0] = SPA_AUDIO_CHANNEL_MONO;
	}
	params[0] = spa_format_audio_raw_build(&b, SPA_PARAM_EnumFormat, &info);
	/* RT_PROCESS: process runs on the data thread. Without it, 0.3.65 queues every
	 * process call on the main loop (pw_loop_invoke with the stream as data); a call
	 * still queued when the stream is destroyed from another thread runs on the freed
	 * stream. With it, pw_stream_disconnect removes the node from the data loop
	 * synchronously and no call is left behind. */
	return pw_stream_connect(stream, direction, PW_ID_ANY,
				 PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS |
				 PW_STREAM_FLAG_RT_PROCESS |
				 (active ? 0 : PW_STREAM_FLAG_INACTIVE),
				 params, 1);
}

int aspw_stream_update_properties(struct pw_stream *stream, const struct pw_properties *props)
{
	return pw_stream_update_properties(stream, &props->dict);
}
