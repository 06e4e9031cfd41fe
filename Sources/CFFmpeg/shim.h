// The parts of FFmpeg 5.1 (Debian 12) that KeyFrameKit uses, and inline functions for the macros
// Swift cannot import. Only the AudioCodec module imports this.
#ifndef KEYFRAME_CFFMPEG_SHIM_H
#define KEYFRAME_CFFMPEG_SHIM_H

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>

/// AVERROR(EAGAIN): the codec wants input (receive) or output to be drained (send).
static inline int kf_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the codec is fully drained.
static inline int kf_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(ENOMEM).
static inline int kf_averror_enomem(void) { return AVERROR(ENOMEM); }
/// AV_NOPTS_VALUE.
static inline int64_t kf_nopts_value(void) { return AV_NOPTS_VALUE; }
/// FFmpeg's own message for an error code (av_err2str without the compound literal).
static inline void kf_error_string(int code, char *buffer, size_t size) { av_strerror(code, buffer, size); }
/// The default (native-order) layout for a channel count: stereo, 5.1, …
static inline void kf_default_channel_layout(AVChannelLayout *layout, int channels) {
    av_channel_layout_default(layout, channels);
}

#endif
