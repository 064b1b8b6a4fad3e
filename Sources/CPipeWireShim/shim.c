#include "cpipewire_shim.h"
