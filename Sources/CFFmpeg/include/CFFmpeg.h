// FFmpeg 5.1 (Debian 12) for KeyFrameKit's AudioCodec module.
//
// libavcodec pulls in ~110 shared libraries (~17 MB of resident memory before any work), so it is
// not linked: kf_ffmpeg_load() opens libavcodec and libavutil with dlopen() the first time a codec
// is made, and the kf_ functions below call through the resolved symbols. Commands that never
// encode or decode (probe, demux, mux) never load it. The types and constants come from FFmpeg's
// own headers (libavcodec-dev, libavutil-dev).
#ifndef KEYFRAME_CFFMPEG_H
#define KEYFRAME_CFFMPEG_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/md5.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>

/// Loads libavcodec and libavutil once (thread-safe). Returns 0, or -1 with kf_ffmpeg_load_error().
int kf_ffmpeg_load(void);
/// Why kf_ffmpeg_load() failed: the library or symbol that could not be found.
const char *kf_ffmpeg_load_error(void);

// The FFmpeg functions AudioCodec calls, by the same signatures. Call kf_ffmpeg_load() first.
const AVCodec *kf_avcodec_find_encoder(enum AVCodecID id);
const AVCodec *kf_avcodec_find_decoder(enum AVCodecID id);
/// avcodec_find_encoder_by_name: an encoder by its libavcodec name (`libmp3lame`, `libopus`).
const AVCodec *kf_avcodec_find_encoder_by_name(const char *name);
/// av_packet_get_side_data: a packet's side data of `type` (an encoder's final extradata,
/// AV_PKT_DATA_NEW_EXTRADATA), or NULL.
uint8_t *kf_av_packet_get_side_data(const AVPacket *packet, enum AVPacketSideDataType type, size_t *size);
AVCodecContext *kf_avcodec_alloc_context3(const AVCodec *codec);
void kf_avcodec_free_context(AVCodecContext **context);
int kf_avcodec_open2(AVCodecContext *context, const AVCodec *codec, AVDictionary **options);
/// av_opt_set: sets a named option of an FFmpeg object (a codec's private options: `priv_data`).
int kf_av_opt_set(void *object, const char *name, const char *value, int searchFlags);
int kf_avcodec_send_frame(AVCodecContext *context, const AVFrame *frame);
int kf_avcodec_receive_packet(AVCodecContext *context, AVPacket *packet);
int kf_avcodec_send_packet(AVCodecContext *context, const AVPacket *packet);
int kf_avcodec_receive_frame(AVCodecContext *context, AVFrame *frame);
AVFrame *kf_av_frame_alloc(void);
void kf_av_frame_free(AVFrame **frame);
int kf_av_frame_get_buffer(AVFrame *frame, int align);
/// av_md5_alloc, av_md5_init, av_md5_update, av_md5_final (RFC 1321), and av_free for the context.
struct AVMD5 *kf_av_md5_alloc(void);
void kf_av_md5_init(struct AVMD5 *context);
void kf_av_md5_update(struct AVMD5 *context, const uint8_t *bytes, size_t count);
void kf_av_md5_final(struct AVMD5 *context, uint8_t *digest);
void kf_av_free(void *pointer);
int kf_av_frame_make_writable(AVFrame *frame);
void kf_av_frame_unref(AVFrame *frame);
AVPacket *kf_av_packet_alloc(void);
void kf_av_packet_free(AVPacket **packet);
void kf_av_packet_unref(AVPacket *packet);
int kf_av_new_packet(AVPacket *packet, int size);
void *kf_av_mallocz(size_t size);
void kf_av_log_set_level(int level);
int kf_av_channel_layout_copy(AVChannelLayout *destination, const AVChannelLayout *source);
/// The default (native-order) layout for a channel count: stereo, 5.1, …
void kf_default_channel_layout(AVChannelLayout *layout, int channels);
/// av_channel_layout_from_mask: a native-order layout of the speakers `mask` names.
int kf_av_channel_layout_from_mask(AVChannelLayout *layout, uint64_t mask);
/// FFmpeg's own message for an error code (av_strerror).
void kf_error_string(int code, char *buffer, size_t size);

// libavformat and libswresample: loaded by kf_avformat_load(), separately from the codecs, so
// that only jobs which read other containers (`convert`) or convert PCM load them.

/// Loads libavformat and libswresample once (after libavcodec). Returns 0, or -1 with
/// kf_ffmpeg_load_error().
int kf_avformat_load(void);
int kf_avformat_open_input(AVFormatContext **context, const char *url, const AVInputFormat *format, AVDictionary **options);
int kf_avformat_find_stream_info(AVFormatContext *context, AVDictionary **options);
int kf_av_find_best_stream(AVFormatContext *context, enum AVMediaType type, int wanted, int related,
                           const AVCodec **decoder, int flags);
int kf_av_read_frame(AVFormatContext *context, AVPacket *packet);
void kf_avformat_close_input(AVFormatContext **context);
AVDictionaryEntry *kf_av_dict_get(const AVDictionary *dictionary, const char *key, const AVDictionaryEntry *previous, int flags);
int kf_av_dict_set(AVDictionary **dictionary, const char *key, const char *value, int flags);
void kf_av_dict_free(AVDictionary **dictionary);
int kf_avcodec_parameters_to_context(AVCodecContext *context, const AVCodecParameters *parameters);
int kf_swr_alloc_set_opts2(SwrContext **context, const AVChannelLayout *outLayout, enum AVSampleFormat outFormat, int outRate,
                           const AVChannelLayout *inLayout, enum AVSampleFormat inFormat, int inRate, int logOffset, void *logContext);
int kf_swr_init(SwrContext *context);
void kf_swr_free(SwrContext **context);
int kf_swr_convert(SwrContext *context, uint8_t **output, int outCount, const uint8_t **input, int inCount);
int64_t kf_swr_get_delay(SwrContext *context, int64_t base);
int kf_av_opt_set_int(void *object, const char *name, int64_t value, int searchFlags);
int kf_av_opt_set_double(void *object, const char *name, double value, int searchFlags);
void kf_av_channel_layout_uninit(AVChannelLayout *layout);
int kf_av_channel_layout_describe(const AVChannelLayout *layout, char *buffer, size_t size);
const char *kf_avcodec_get_name(enum AVCodecID id);
int kf_av_get_bytes_per_sample(enum AVSampleFormat format);
int kf_av_sample_fmt_is_planar(enum AVSampleFormat format);

/// Opens `*context` on bytes read through `read_at` instead of a file (a custom AVIOContext,
/// AVFMT_FLAG_CUSTOM_IO, seekable): `read_at(opaque, offset, buffer, count)` puts up to `count`
/// bytes at `offset` into `buffer` and returns how many (0 at the end) or an AVERROR. `size`
/// is the input's length (what AVSEEK_SIZE answers). Returns avformat_open_input's code; on
/// failure nothing is left to free. Close with kf_avformat_close_callbacks.
int kf_avformat_open_callbacks(AVFormatContext **context, void *opaque, int64_t size,
                               int (*read_at)(void *opaque, int64_t offset, uint8_t *buffer, int count), AVDictionary **options);
/// avformat_close_input of a context opened by kf_avformat_open_callbacks, then its
/// AVIOContext, the AVIOContext's buffer and its reader.
void kf_avformat_close_callbacks(AVFormatContext **context);

/// AVERROR(EAGAIN): the codec wants input (receive) or output to be drained (send).
static inline int kf_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the codec is fully drained.
static inline int kf_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(EIO).
static inline int kf_averror_eio(void) { return AVERROR(EIO); }
/// AVERROR(ENOMEM).
static inline int kf_averror_enomem(void) { return AVERROR(ENOMEM); }
/// AVERROR_STREAM_NOT_FOUND: av_find_best_stream found no stream of the type.
static inline int kf_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
/// AVERROR_DECODER_NOT_FOUND: a stream of the type exists but no decoder for it.
static inline int kf_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
/// AVERROR_INVALIDDATA.
static inline int kf_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AV_NOPTS_VALUE.
static inline int64_t kf_nopts_value(void) { return AV_NOPTS_VALUE; }

#endif
