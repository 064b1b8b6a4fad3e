// Prefixed (aspw_) real functions for the PipeWire/SPA macros and static-inline
// calls that Swift cannot import directly. Each one says why it exists.
#ifndef AUDIO_SESSION_CPIPEWIRE_SHIM_PUBLIC_H
#define AUDIO_SESSION_CPIPEWIRE_SHIM_PUBLIC_H
#include <stdint.h>
#endif
