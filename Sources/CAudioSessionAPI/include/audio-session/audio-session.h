/* libaudiosession: audio sessions for PipeWire programs written in C, C++ or any
 * language that calls C (Python's ctypes, Rust's FFI…).
 *
 * A program declares what its audio is for (a category, a mode, options), activates
 * its session, and plays through an output of the session; the audio-session policy
 * (libpipewire-module-audio-session, inside the PipeWire daemon) pauses it for a call,
 * ducks it under a navigation prompt, silences it when the headphones go away, and tells
 * it so through the callbacks below. This is Apple's AVAudioSession model; the rules are
 * in the project's docs/policy.md, the C API's guide in docs/c-api.md.
 *
 * Threads and events: every function may be called from any thread. Notifications are
 * queued by the library and delivered by as_session_dispatch(), on the thread that calls
 * it: poll the descriptor from as_session_get_fd() for reading in the program's own loop
 * (poll, epoll, GLib's g_unix_fd_add, libuv…) and call as_session_dispatch() when it is
 * readable. The render callback of an output is the exception: it runs on PipeWire's
 * realtime thread.
 *
 * Errors: functions that can fail return 0 or a negative as_error; as_session_last_error()
 * gives the sentence that explains the last failure on that session.
 *
 * ABI: libaudiosession.so.0. Structures passed in carry a version field; new members are
 * only ever added at their end. Compiles as C99 and as C++.
 */
#ifndef AUDIO_SESSION_H
#define AUDIO_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AS_API_VERSION 1

/** One program's audio session: its declaration, its activation, its notifications. */
typedef struct as_session as_session;
/** A playback stream that belongs to a session. */
typedef struct as_output as_output;
/** A capture stream that belongs to a session. */
typedef struct as_input as_input;

/** What the program's audio is for (AVAudioSession.Category). */
typedef enum as_category {
    AS_CATEGORY_AMBIENT = 0,        /**< mixes with others; silenced by the screen lock and silent mode */
    AS_CATEGORY_SOLO_AMBIENT = 1,   /**< the default: interrupts others; silenced by the lock and silent mode */
    AS_CATEGORY_PLAYBACK = 2,       /**< music, podcasts, video: plays on when locked or silent */
    AS_CATEGORY_RECORD = 3,
    AS_CATEGORY_PLAY_AND_RECORD = 4, /**< calls */
    AS_CATEGORY_MULTI_ROUTE = 5
} as_category;

/** A refinement of the category (AVAudioSession.Mode). */
typedef enum as_mode {
    AS_MODE_DEFAULT = 0,
    AS_MODE_VOICE_CHAT = 1,
    AS_MODE_GAME_CHAT = 2,
    AS_MODE_VIDEO_RECORDING = 3,
    AS_MODE_MEASUREMENT = 4,
    AS_MODE_MOVIE_PLAYBACK = 5,
    AS_MODE_VIDEO_CHAT = 6,
    AS_MODE_SPOKEN_AUDIO = 7,
    AS_MODE_VOICE_PROMPT = 8
} as_mode;

/** Category options (AVAudioSession.CategoryOptions), combined with |. */
enum {
    AS_OPTION_MIX_WITH_OTHERS = 1u << 0,
    AS_OPTION_DUCK_OTHERS = 1u << 1,
    AS_OPTION_INTERRUPT_SPOKEN_AUDIO_AND_MIX_WITH_OTHERS = 1u << 2,
    AS_OPTION_ALLOW_BLUETOOTH_HFP = 1u << 3,
    AS_OPTION_ALLOW_BLUETOOTH_A2DP = 1u << 4,
    AS_OPTION_ALLOW_AIRPLAY = 1u << 5,
    AS_OPTION_DEFAULT_TO_SPEAKER = 1u << 6,
    AS_OPTION_OVERRIDE_MUTED_MICROPHONE_INTERRUPTION = 1u << 7
};

/** Flags of as_session_set_active(). */
enum {
    /** On deactivation: end the interruptions this session caused, with shouldResume. */
    AS_NOTIFY_OTHERS_ON_DEACTIVATION = 1u << 0
};

/** Results. The negative values are the policy's errors (AVAudioSession's error codes). */
typedef enum as_error {
    AS_OK = 0,
    /** Deactivated while its own output still plays: done, but the session says it is busy. */
    AS_WARNING_IS_BUSY = 1,
    AS_ERROR_INCOMPATIBLE_CATEGORY = -1, /**< the mode or an option does not go with the category */
    AS_ERROR_BAD_PARAM = -2,             /**< an argument out of range, or NULL */
    AS_ERROR_INSUFFICIENT_PRIORITY = -3, /**< a higher-priority session holds the audio (a call) */
    AS_ERROR_CANNOT_INTERRUPT_OTHERS = -4,
    AS_ERROR_IS_BUSY = -5,
    AS_ERROR_MEDIA_SERVICES_FAILED = -6, /**< no PipeWire, or no policy in it */
    AS_ERROR_SESSION_NOT_ACTIVE = -7
} as_error;

typedef enum as_interruption_type {
    AS_INTERRUPTION_BEGAN = 0, /**< the session's output has already stopped */
    AS_INTERRUPTION_ENDED = 1  /**< should_resume tells whether to play again */
} as_interruption_type;

typedef enum as_interruption_reason {
    AS_INTERRUPTION_REASON_DEFAULT = 0,
    AS_INTERRUPTION_REASON_BUILT_IN_MIC_MUTED = 1,
    AS_INTERRUPTION_REASON_ROUTE_DISCONNECTED = 2,
    AS_INTERRUPTION_REASON_APP_WAS_SUSPENDED = 3
} as_interruption_reason;

typedef enum as_route_change_reason {
    AS_ROUTE_CHANGE_UNKNOWN = 0,
    AS_ROUTE_CHANGE_NEW_DEVICE_AVAILABLE = 1,
    AS_ROUTE_CHANGE_OLD_DEVICE_UNAVAILABLE = 2, /**< the headphones went away: stop, do not resume */
    AS_ROUTE_CHANGE_CATEGORY_CHANGE = 3,
    AS_ROUTE_CHANGE_OVERRIDE = 4,
    AS_ROUTE_CHANGE_WAKE_FROM_SLEEP = 5,
    AS_ROUTE_CHANGE_NO_SUITABLE_ROUTE_FOR_CATEGORY = 6,
    AS_ROUTE_CHANGE_ROUTE_CONFIGURATION_CHANGE = 7
} as_route_change_reason;

/** One endpoint of a route (AVAudioSessionPortDescription). */
typedef struct as_port {
    const char *name; /**< what a person reads: "Headphones" */
    const char *uid;  /**< PipeWire's node.name */
    const char *type; /**< AVAudioSession's port type: "headphones", "builtInSpeaker", "bluetoothA2DP", "HDMI"… */
} as_port;

/** Where the audio goes and comes from (AVAudioSessionRouteDescription). */
typedef struct as_route {
    size_t n_outputs;
    const as_port *outputs;
    size_t n_inputs;
    const as_port *inputs;
} as_route;

/** What a session hears. Any member may be NULL. The pointers passed are valid during the call only. */
typedef struct as_callbacks {
    uint32_t version; /**< AS_CALLBACKS_VERSION */
    void (*interruption)(void *data, as_interruption_type type, as_interruption_reason reason, bool should_resume);
    void (*route_change)(void *data, as_route_change_reason reason, const as_route *previous);
    void (*silence_secondary_audio_hint)(void *data, bool begin);
    void (*media_services_lost)(void *data);
    /** PipeWire or the policy came back: the declaration is sent again; activate again. */
    void (*media_services_reset)(void *data);
} as_callbacks;
#define AS_CALLBACKS_VERSION 1

/** Where as_session_override_output_port() sends the session's output. */
typedef enum as_port_override {
    AS_PORT_OVERRIDE_NONE = 0,   /**< the route the system chooses */
    AS_PORT_OVERRIDE_SPEAKER = 1 /**< the built-in speaker (a call on speakerphone) */
} as_port_override;

/** Renders up to `frames` interleaved float frames of `channels` channels into `buffer`;
 * returns the frames written (0: nothing to play now). Runs on PipeWire's realtime thread:
 * it must not block, allocate or take locks another thread holds long. */
typedef uint32_t (*as_render_fn)(void *data, float *buffer, uint32_t frames, uint32_t channels);

/** A new session for this program, connected to PipeWire (and reconnected after a restart).
 * `application_name` may be NULL. Returns NULL only when out of memory; without PipeWire,
 * activation fails with AS_ERROR_MEDIA_SERVICES_FAILED until it is there. */
as_session *as_session_new(const char *application_name);
/** Frees the session: its connection closes and the policy forgets it (free its outputs first). NULL is ignored. */
void as_session_free(as_session *session);

/** Declares the category, mode and options (validated as the policy does: §9 of the rules). */
int as_session_set_category(as_session *session, as_category category, as_mode mode, uint32_t options);
/** Activates (true) or deactivates (false) the session and waits for the policy's answer
 * (at most 3 s). `flags`: AS_NOTIFY_OTHERS_ON_DEACTIVATION. Returns AS_OK, AS_WARNING_IS_BUSY
 * or an error (AS_ERROR_INSUFFICIENT_PRIORITY while a call holds the audio…). */
int as_session_set_active(as_session *session, bool active, uint32_t flags);
/** The explanation of the last failure on this session ("" when none); valid until the next call. */
const char *as_session_last_error(as_session *session);

/** Asks not to be interrupted by system alerts (AVAudioSession's prefersNoInterruptionsFromSystemAlerts). */
int as_session_set_prefers_no_interruptions_from_system_alerts(as_session *session, bool prefers);
/** Asks for an interruption (reason routeDisconnected) rather than a route change when the
 * route goes away (prefersInterruptionOnRouteDisconnect). */
int as_session_set_prefers_interruption_on_route_disconnect(as_session *session, bool prefers);
/** Sends the session's output to the built-in speaker, or back to the system's choice;
 * answered with a route change (reason override). AS_ERROR_BAD_PARAM when there is no speaker. */
int as_session_override_output_port(as_session *session, as_port_override port);

/** Sets the callbacks (copied) and the pointer they get. */
int as_session_set_callbacks(as_session *session, const as_callbacks *callbacks, void *data);
/** A descriptor that is readable while notifications wait for as_session_dispatch(). */
int as_session_get_fd(as_session *session);
/** Delivers the waiting notifications on the calling thread; returns how many. */
int as_session_dispatch(as_session *session);

/** Whether another session plays now (AVAudioSession.isOtherAudioPlaying). */
bool as_session_is_other_audio_playing(as_session *session);
/** Whether the policy suggests silencing secondary audio (a game's soundtrack) now. */
bool as_session_secondary_audio_should_be_silenced(as_session *session);
/** Whether the session is active, and whether it is interrupted, as the policy last said. */
bool as_session_is_active(as_session *session);
bool as_session_is_interrupted(as_session *session);
/** The current route: free with as_route_free(). Never NULL unless out of memory. */
as_route *as_session_copy_current_route(as_session *session);
void as_route_free(as_route *route);

/** A playback stream of the session, playing unless `paused`. `name` is its node description. */
as_output *as_output_new(as_session *session, const char *name, uint32_t rate, uint32_t channels,
                         bool paused, as_render_fn render, void *data);
/** Pauses (true) or resumes (false) the output. */
void as_output_set_paused(as_output *output, bool paused);
/** PipeWire's node id of the output, 0 while it has none. */
uint32_t as_output_node_id(as_output *output);
/** Stops and frees the output. NULL is ignored. */
void as_output_free(as_output *output);

/** Gets each captured buffer: `frames` interleaved float frames of `channels` channels.
 * Runs on PipeWire's realtime thread, like as_render_fn. */
typedef void (*as_capture_fn)(void *data, const float *buffer, uint32_t frames, uint32_t channels);

/** A capture stream of the session (a recorder's microphone), capturing unless `paused`. */
as_input *as_input_new(as_session *session, const char *name, uint32_t rate, uint32_t channels,
                       bool paused, as_capture_fn capture, void *data);
/** Pauses (true) or resumes (false) the input. */
void as_input_set_paused(as_input *input, bool paused);
/** PipeWire's node id of the input, 0 while it has none. */
uint32_t as_input_node_id(as_input *input);
/** Stops and frees the input. NULL is ignored. */
void as_input_free(as_input *input);

/** The names the rules use ("playback", "voiceChat", "insufficientPriority", "routeDisconnected"…). */
const char *as_category_name(as_category category);
const char *as_mode_name(as_mode mode);
const char *as_error_name(int error);
const char *as_interruption_reason_name(as_interruption_reason reason);
const char *as_route_change_reason_name(as_route_change_reason reason);

#ifdef __cplusplus
}
#endif
#endif
