// The PipeWire and SPA headers the Swift side uses (libpipewire-0.3, libspa-0.2).
#ifndef AUDIO_SESSION_CPIPEWIRE_SHIM_H
#define AUDIO_SESSION_CPIPEWIRE_SHIM_H
#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/utils/dict.h>
#include <spa/utils/result.h>
#endif
