// Prefixed (aspw_) real functions for the PipeWire/SPA macros and static-inline
// calls that Swift cannot import directly. Each one says why it exists.
//
// Listener structs (`struct spa_hook` plus the event table) live in C, in an
// `aspw_hook` allocated here: Swift only holds the opaque pointer and frees it
// with `aspw_hook_free` before it destroys the proxy the hook is attached to.
#ifndef AUDIO_SESSION_CPIPEWIRE_SHIM_PUBLIC_H
#define AUDIO_SESSION_CPIPEWIRE_SHIM_PUBLIC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>

/// One registered listener: its spa_hook and the Swift callbacks it forwards to.
typedef struct aspw_hook aspw_hook;

/// Removes the listener (spa_hook_remove is static inline) and frees it. NULL is ignored.
void aspw_hook_free(aspw_hook *hook);

// MARK: core

typedef void (*aspw_core_done_fn)(void *data, uint32_t id, int seq);
typedef void (*aspw_core_error_fn)(void *data, uint32_t id, int seq, int res, const char *message);
/// pw_core_add_listener is a macro over the proxy's method table.
aspw_hook *aspw_core_add_listener(struct pw_core *core, aspw_core_done_fn done, aspw_core_error_fn error, void *data);
/// pw_core_sync is a macro.
int aspw_core_sync(struct pw_core *core, int seq);
/// pw_core_get_registry is a macro.
struct pw_registry *aspw_core_get_registry(struct pw_core *core);
/// pw_core_update_properties takes a spa_dict; Swift holds a pw_properties.
int aspw_core_update_properties(struct pw_core *core, const struct pw_properties *props);
/// The server-side id of this connection's client object (pw_core_get_client +
/// pw_proxy_get_bound_id, with the pw_client -> pw_proxy cast C allows). SPA_ID_INVALID until known.
uint32_t aspw_core_client_id(struct pw_core *core);

// MARK: registry

typedef void (*aspw_global_fn)(void *data, uint32_t id, uint32_t permissions, const char *type,
                               uint32_t version, const struct spa_dict *props);
typedef void (*aspw_global_remove_fn)(void *data, uint32_t id);
/// pw_registry_add_listener is a macro.
aspw_hook *aspw_registry_add_listener(struct pw_registry *registry, aspw_global_fn global,
                                      aspw_global_remove_fn global_remove, void *data);
/// pw_registry_bind is a macro.
struct pw_proxy *aspw_registry_bind(struct pw_registry *registry, uint32_t id, const char *type, uint32_t version);

// MARK: metadata

typedef int (*aspw_property_fn)(void *data, uint32_t subject, const char *key, const char *type, const char *value);
/// pw_metadata_add_listener is a macro; the proxy comes from aspw_registry_bind.
aspw_hook *aspw_metadata_add_listener(struct pw_proxy *metadata, aspw_property_fn property, void *data);
/// pw_metadata_set_property is a macro (used on the "default" metadata for target.object).
int aspw_metadata_set_property(struct pw_proxy *metadata, uint32_t subject, const char *key, const char *type, const char *value);

// MARK: proxy

typedef void (*aspw_proxy_removed_fn)(void *data);
/// pw_proxy_add_listener needs a pw_proxy_events table and a spa_hook: both live here.
aspw_hook *aspw_proxy_add_listener(struct pw_proxy *proxy, aspw_proxy_removed_fn removed, void *data);

// MARK: node

typedef void (*aspw_node_info_fn)(void *data, const struct spa_dict *props);
/// pw_node_add_listener is a macro; the proxy comes from aspw_registry_bind. `info`
/// gets the node's full properties (the registry carries only a few of them).
aspw_hook *aspw_node_add_listener(struct pw_proxy *node, aspw_node_info_fn info, void *data);

// MARK: dict

/// spa_dict_lookup is static inline.
const char *aspw_dict_lookup(const struct spa_dict *dict, const char *key);
/// spa_dict fields through one call (Swift sees struct spa_dict_item arrays awkwardly).
uint32_t aspw_dict_count(const struct spa_dict *dict);
const char *aspw_dict_key(const struct spa_dict *dict, uint32_t index);
const char *aspw_dict_value(const struct spa_dict *dict, uint32_t index);

// MARK: stream

/// Renders up to `max_frames` interleaved float frames into `dst`; returns the
/// frames written (0: nothing to play now, the buffer is queued silent).
typedef uint32_t (*aspw_render_fn)(void *data, float *dst, uint32_t max_frames, uint32_t channels);
typedef void (*aspw_stream_state_fn)(void *data, int old_state, int state, const char *error);
/// pw_stream_add_listener needs a pw_stream_events table and a spa_hook; the
/// process callback also dequeues/queues buffers (struct field access) here.
aspw_hook *aspw_stream_add_listener(struct pw_stream *stream, aspw_render_fn render,
                                    aspw_stream_state_fn state_changed, uint32_t channels, void *data);
/// pw_stream_connect needs an EnumFormat POD built with spa_format_audio_raw_build (static inline);
/// `active == false` connects it paused (PW_STREAM_FLAG_INACTIVE).
int aspw_stream_connect_playback(struct pw_stream *stream, uint32_t rate, uint32_t channels, bool active);
/// The same for a capture stream (PW_DIRECTION_INPUT). Its listener must come from
/// aspw_stream_add_capture_listener: `render` then gets each captured buffer (`dst`
/// holds `max_frames` frames to read) and its return value is ignored.
int aspw_stream_connect_capture(struct pw_stream *stream, uint32_t rate, uint32_t channels, bool active);
aspw_hook *aspw_stream_add_capture_listener(struct pw_stream *stream, aspw_render_fn render,
                                            aspw_stream_state_fn state_changed, uint32_t channels, void *data);
/// pw_stream_update_properties takes a spa_dict; Swift holds a pw_properties.
int aspw_stream_update_properties(struct pw_stream *stream, const struct pw_properties *props);

/// SPA_ID_INVALID is a macro.
extern const uint32_t aspw_id_invalid;
/// -EPIPE: the errno PipeWire reports when the daemon went away.
extern const int aspw_epipe;
#endif
