#ifndef KEYFRAME_CLIBFUZZER_H
#define KEYFRAME_CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver entry point (compiler-rt FuzzerInterface.h). It exists only in binaries
/// linked with -sanitize=fuzzer; keyframe-fuzz calls it only when built with -DFUZZING.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
