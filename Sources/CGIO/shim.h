// GIO (GLib's I/O library, libgio-2.0) for the session agent: GDBus for the session
// and system buses, GSettings for the desktop's Do Not Disturb switch.
#ifndef AUDIO_SESSION_CGIO_SHIM_H
#define AUDIO_SESSION_CGIO_SHIM_H
#include <gio/gio.h>
#endif
