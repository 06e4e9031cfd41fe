// ALSA (libasound2-dev, alsa-lib 1.2.8 on Debian 12) for KeyFrameKit's AudioIO module.
//
// alsa/asoundlib.h imports into Swift as is, except for what is a macro or variadic: those get
// the kf_alsa_ shims below. The hw-params `alloca` macros are replaced in Swift by
// snd_pcm_hw_params_malloc / snd_pcm_hw_params_free.
#ifndef KEYFRAME_CALSA_H
#define KEYFRAME_CALSA_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <alsa/asoundlib.h>

/// Replaces alsa-lib's default error handler, which prints "ALSA lib pcm.c:…" lines on stderr
/// for every failed lookup, with one that discards them (snd_lib_error_handler_t is variadic,
/// so Swift cannot supply it). AudioIO reports each failure itself through ALSAError.
void kf_alsa_silence_library_errors(void);

/// CLOCK_MONOTONIC in nanoseconds (the clock capture timestamps are taken on).
static inline int64_t kf_alsa_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + (int64_t)now.tv_nsec;
}

#endif
