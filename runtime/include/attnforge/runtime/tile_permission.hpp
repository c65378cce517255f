// AMX tile registers are off for a Linux process until it asks for them (arch_prctl ARCH_REQ_XCOMP_PERM for
// XTILEDATA, Linux 5.16 and later); the first tile instruction of a process that did not ask dies with SIGILL.
// Kernels generated for a target with AMX (bf16 products on Sapphire Rapids and later: codegen's
// Tiles::amx_products) need them, so every kernel call asks, once per process (runtime/src/tile_permission.cpp).
#pragma once

namespace attnforge::runtime {

// True where the CPU has AMX tiles and the process may use them (asked on the first call); false on a CPU
// without them, or where Linux refused (then a warning on stderr, once).
bool request_amx_tiles();

}  // namespace attnforge::runtime
