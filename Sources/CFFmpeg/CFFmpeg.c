// Lazy binding of the FFmpeg functions AudioCodec uses: see include/CFFmpeg.h.
#include "CFFmpeg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define KF_STRING2(x) #x
#define KF_STRING(x) KF_STRING2(x)

static pthread_once_t kf_once = PTHREAD_ONCE_INIT;
static int kf_status = -1;
static char kf_error[512] = "FFmpeg not loaded";

static struct {
    const AVCodec *(*avcodec_find_encoder)(enum AVCodecID);
    const AVCodec *(*avcodec_find_decoder)(enum AVCodecID);
    const AVCodec *(*avcodec_find_encoder_by_name)(const char *);
    uint8_t *(*av_packet_get_side_data)(const AVPacket *, enum AVPacketSideDataType, size_t *);
    AVCodecContext *(*avcodec_alloc_context3)(const AVCodec *);
    void (*avcodec_free_context)(AVCodecContext **);
    int (*avcodec_open2)(AVCodecContext *, const AVCodec *, AVDictionary **);
    int (*avcodec_send_frame)(AVCodecContext *, const AVFrame *);
    int (*avcodec_receive_packet)(AVCodecContext *, AVPacket *);
    int (*avcodec_send_packet)(AVCodecContext *, const AVPacket *);
    int (*avcodec_receive_frame)(AVCodecContext *, AVFrame *);
    AVPacket *(*av_packet_alloc)(void);
    void (*av_packet_free)(AVPacket **);
    void (*av_packet_unref)(AVPacket *);
    int (*av_new_packet)(AVPacket *, int);
    AVFrame *(*av_frame_alloc)(void);
    void (*av_frame_free)(AVFrame **);
    int (*av_frame_get_buffer)(AVFrame *, int);
    int (*av_frame_make_writable)(AVFrame *);
    void (*av_frame_unref)(AVFrame *);
    void *(*av_mallocz)(size_t);
    void (*av_log_set_level)(int);
    int (*av_channel_layout_copy)(AVChannelLayout *, const AVChannelLayout *);
    void (*av_channel_layout_default)(AVChannelLayout *, int);
    int (*av_channel_layout_from_mask)(AVChannelLayout *, uint64_t);
    int (*av_strerror)(int, char *, size_t);
    int (*av_opt_set)(void *, const char *, const char *, int);
    struct AVMD5 *(*av_md5_alloc)(void);
    void (*av_md5_init)(struct AVMD5 *);
    void (*av_md5_update)(struct AVMD5 *, const uint8_t *, size_t);
    void (*av_md5_final)(struct AVMD5 *, uint8_t *);
    void (*av_free)(void *);
} kf;

static void *kf_open(const char *name) {
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) snprintf(kf_error, sizeof kf_error, "cannot load %s: %s (install FFmpeg's libraries: libavcodec59, libavformat59, libswresample4)", name, dlerror());
    return handle;
}

#define KF_BIND(handle, name)                                                                     \
    do {                                                                                          \
        *(void **)(&kf.name) = dlsym(handle, #name);                                              \
        if (!kf.name) {                                                                           \
            snprintf(kf_error, sizeof kf_error, "FFmpeg has no symbol %s", #name);                \
            return;                                                                               \
        }                                                                                         \
    } while (0)

static void kf_load_once(void) {
    void *avutil = kf_open("libavutil.so." KF_STRING(LIBAVUTIL_VERSION_MAJOR));
    if (!avutil) return;
    void *avcodec = kf_open("libavcodec.so." KF_STRING(LIBAVCODEC_VERSION_MAJOR));
    if (!avcodec) return;
    KF_BIND(avcodec, avcodec_find_encoder);
    KF_BIND(avcodec, avcodec_find_decoder);
    KF_BIND(avcodec, avcodec_find_encoder_by_name);
    KF_BIND(avcodec, av_packet_get_side_data);
    KF_BIND(avcodec, avcodec_alloc_context3);
    KF_BIND(avcodec, avcodec_free_context);
    KF_BIND(avcodec, avcodec_open2);
    KF_BIND(avcodec, avcodec_send_frame);
    KF_BIND(avcodec, avcodec_receive_packet);
    KF_BIND(avcodec, avcodec_send_packet);
    KF_BIND(avcodec, avcodec_receive_frame);
    KF_BIND(avcodec, av_packet_alloc);
    KF_BIND(avcodec, av_packet_free);
    KF_BIND(avcodec, av_packet_unref);
    KF_BIND(avcodec, av_new_packet);
    KF_BIND(avutil, av_frame_alloc);
    KF_BIND(avutil, av_frame_free);
    KF_BIND(avutil, av_frame_get_buffer);
    KF_BIND(avutil, av_frame_make_writable);
    KF_BIND(avutil, av_frame_unref);
    KF_BIND(avutil, av_mallocz);
    KF_BIND(avutil, av_channel_layout_from_mask);
    KF_BIND(avutil, av_log_set_level);
    KF_BIND(avutil, av_channel_layout_copy);
    KF_BIND(avutil, av_channel_layout_default);
    KF_BIND(avutil, av_strerror);
    KF_BIND(avutil, av_opt_set);
    KF_BIND(avutil, av_md5_alloc);
    KF_BIND(avutil, av_md5_init);
    KF_BIND(avutil, av_md5_update);
    KF_BIND(avutil, av_md5_final);
    KF_BIND(avutil, av_free);
    kf.av_log_set_level(AV_LOG_ERROR);
    kf_status = 0;
}

int kf_ffmpeg_load(void) {
    pthread_once(&kf_once, kf_load_once);
    return kf_status;
}

const char *kf_ffmpeg_load_error(void) { return kf_error; }

const AVCodec *kf_avcodec_find_encoder(enum AVCodecID id) { return kf.avcodec_find_encoder(id); }
const AVCodec *kf_avcodec_find_decoder(enum AVCodecID id) { return kf.avcodec_find_decoder(id); }
const AVCodec *kf_avcodec_find_encoder_by_name(const char *name) { return kf.avcodec_find_encoder_by_name(name); }
uint8_t *kf_av_packet_get_side_data(const AVPacket *packet, enum AVPacketSideDataType type, size_t *size) {
    return kf.av_packet_get_side_data(packet, type, size);
}
AVCodecContext *kf_avcodec_alloc_context3(const AVCodec *codec) { return kf.avcodec_alloc_context3(codec); }
void kf_avcodec_free_context(AVCodecContext **context) { kf.avcodec_free_context(context); }
int kf_avcodec_open2(AVCodecContext *context, const AVCodec *codec, AVDictionary **options) { return kf.avcodec_open2(context, codec, options); }
int kf_av_opt_set(void *object, const char *name, const char *value, int searchFlags) { return kf.av_opt_set(object, name, value, searchFlags); }
int kf_avcodec_send_frame(AVCodecContext *context, const AVFrame *frame) { return kf.avcodec_send_frame(context, frame); }
int kf_avcodec_receive_packet(AVCodecContext *context, AVPacket *packet) { return kf.avcodec_receive_packet(context, packet); }
int kf_avcodec_send_packet(AVCodecContext *context, const AVPacket *packet) { return kf.avcodec_send_packet(context, packet); }
int kf_avcodec_receive_frame(AVCodecContext *context, AVFrame *frame) { return kf.avcodec_receive_frame(context, frame); }
AVFrame *kf_av_frame_alloc(void) { return kf.av_frame_alloc(); }
void kf_av_frame_free(AVFrame **frame) { kf.av_frame_free(frame); }
int kf_av_frame_get_buffer(AVFrame *frame, int align) { return kf.av_frame_get_buffer(frame, align); }
struct AVMD5 *kf_av_md5_alloc(void) { return kf.av_md5_alloc(); }
void kf_av_md5_init(struct AVMD5 *context) { kf.av_md5_init(context); }
void kf_av_md5_update(struct AVMD5 *context, const uint8_t *bytes, size_t count) { kf.av_md5_update(context, bytes, count); }
void kf_av_md5_final(struct AVMD5 *context, uint8_t *digest) { kf.av_md5_final(context, digest); }
void kf_av_free(void *pointer) { kf.av_free(pointer); }
int kf_av_frame_make_writable(AVFrame *frame) { return kf.av_frame_make_writable(frame); }
void kf_av_frame_unref(AVFrame *frame) { kf.av_frame_unref(frame); }
AVPacket *kf_av_packet_alloc(void) { return kf.av_packet_alloc(); }
void kf_av_packet_free(AVPacket **packet) { kf.av_packet_free(packet); }
void kf_av_packet_unref(AVPacket *packet) { kf.av_packet_unref(packet); }
int kf_av_new_packet(AVPacket *packet, int size) { return kf.av_new_packet(packet, size); }
void *kf_av_mallocz(size_t size) { return kf.av_mallocz(size); }
void kf_av_log_set_level(int level) { kf.av_log_set_level(level); }
int kf_av_channel_layout_copy(AVChannelLayout *destination, const AVChannelLayout *source) { return kf.av_channel_layout_copy(destination, source); }
void kf_default_channel_layout(AVChannelLayout *layout, int channels) { kf.av_channel_layout_default(layout, channels); }
void kf_error_string(int code, char *buffer, size_t size) {
    if (kf.av_strerror) kf.av_strerror(code, buffer, size);
    else snprintf(buffer, size, "error %d", code);
}

// --- libavformat and libswresample --------------------------------------------------------------

static pthread_once_t kf_format_once = PTHREAD_ONCE_INIT;
static int kf_format_status = -1;

static struct {
    int (*avformat_open_input)(AVFormatContext **, const char *, const AVInputFormat *, AVDictionary **);
    int (*avformat_find_stream_info)(AVFormatContext *, AVDictionary **);
    int (*av_find_best_stream)(AVFormatContext *, enum AVMediaType, int, int, const AVCodec **, int);
    int (*av_read_frame)(AVFormatContext *, AVPacket *);
    void (*avformat_close_input)(AVFormatContext **);
    AVDictionaryEntry *(*av_dict_get)(const AVDictionary *, const char *, const AVDictionaryEntry *, int);
    int (*av_dict_set)(AVDictionary **, const char *, const char *, int);
    void (*av_dict_free)(AVDictionary **);
    int (*avcodec_parameters_to_context)(AVCodecContext *, const AVCodecParameters *);
    const char *(*avcodec_get_name)(enum AVCodecID);
    int (*swr_alloc_set_opts2)(SwrContext **, const AVChannelLayout *, enum AVSampleFormat, int,
                               const AVChannelLayout *, enum AVSampleFormat, int, int, void *);
    int (*swr_init)(SwrContext *);
    void (*swr_free)(SwrContext **);
    int (*swr_convert)(SwrContext *, uint8_t **, int, const uint8_t **, int);
    int64_t (*swr_get_delay)(SwrContext *, int64_t);
    int (*av_opt_set_int)(void *, const char *, int64_t, int);
    int (*av_opt_set_double)(void *, const char *, double, int);
    void (*av_channel_layout_uninit)(AVChannelLayout *);
    int (*av_channel_layout_describe)(const AVChannelLayout *, char *, size_t);
    int (*av_get_bytes_per_sample)(enum AVSampleFormat);
    int (*av_sample_fmt_is_planar)(enum AVSampleFormat);
    AVFormatContext *(*avformat_alloc_context)(void);
    AVIOContext *(*avio_alloc_context)(unsigned char *, int, int, void *, int (*)(void *, uint8_t *, int),
                                       int (*)(void *, uint8_t *, int), int64_t (*)(void *, int64_t, int));
    void (*avio_context_free)(AVIOContext **);
    void *(*av_malloc)(size_t);
    void (*av_freep)(void *);
} kff;

#define KFF_BIND(handle, name)                                                                    \
    do {                                                                                          \
        *(void **)(&kff.name) = dlsym(handle, #name);                                             \
        if (!kff.name) {                                                                          \
            snprintf(kf_error, sizeof kf_error, "FFmpeg has no symbol %s", #name);                \
            return;                                                                               \
        }                                                                                         \
    } while (0)

static void kf_format_load_once(void) {
    if (kf_ffmpeg_load() != 0) return;
    void *avutil = kf_open("libavutil.so." KF_STRING(LIBAVUTIL_VERSION_MAJOR));
    void *avcodec = kf_open("libavcodec.so." KF_STRING(LIBAVCODEC_VERSION_MAJOR));
    void *avformat = kf_open("libavformat.so." KF_STRING(LIBAVFORMAT_VERSION_MAJOR));
    if (!avutil || !avcodec || !avformat) return;
    void *swresample = kf_open("libswresample.so." KF_STRING(LIBSWRESAMPLE_VERSION_MAJOR));
    if (!swresample) return;
    KFF_BIND(avformat, avformat_open_input);
    KFF_BIND(avformat, avformat_find_stream_info);
    KFF_BIND(avformat, av_find_best_stream);
    KFF_BIND(avformat, av_read_frame);
    KFF_BIND(avformat, avformat_close_input);
    KFF_BIND(avutil, av_dict_get);
    KFF_BIND(avutil, av_dict_set);
    KFF_BIND(avutil, av_dict_free);
    KFF_BIND(avcodec, avcodec_parameters_to_context);
    KFF_BIND(avcodec, avcodec_get_name);
    KFF_BIND(swresample, swr_alloc_set_opts2);
    KFF_BIND(swresample, swr_init);
    KFF_BIND(swresample, swr_free);
    KFF_BIND(swresample, swr_convert);
    KFF_BIND(swresample, swr_get_delay);
    KFF_BIND(avutil, av_opt_set_int);
    KFF_BIND(avutil, av_opt_set_double);
    KFF_BIND(avutil, av_channel_layout_uninit);
    KFF_BIND(avutil, av_channel_layout_describe);
    KFF_BIND(avutil, av_get_bytes_per_sample);
    KFF_BIND(avutil, av_sample_fmt_is_planar);
    KFF_BIND(avformat, avformat_alloc_context);
    KFF_BIND(avformat, avio_alloc_context);
    KFF_BIND(avformat, avio_context_free);
    KFF_BIND(avutil, av_malloc);
    KFF_BIND(avutil, av_freep);
    // Damage and failures reach the caller as values (skipped packets, errors naming the
    // file), not as libav's own lines on stderr.
    kf.av_log_set_level(AV_LOG_QUIET);
    kf_format_status = 0;
}

int kf_avformat_load(void) {
    pthread_once(&kf_format_once, kf_format_load_once);
    return kf_format_status;
}

int kf_avformat_open_input(AVFormatContext **context, const char *url, const AVInputFormat *format, AVDictionary **options) {
    return kff.avformat_open_input(context, url, format, options);
}
int kf_avformat_find_stream_info(AVFormatContext *context, AVDictionary **options) { return kff.avformat_find_stream_info(context, options); }
int kf_av_find_best_stream(AVFormatContext *context, enum AVMediaType type, int wanted, int related, const AVCodec **decoder, int flags) {
    return kff.av_find_best_stream(context, type, wanted, related, decoder, flags);
}
int kf_av_read_frame(AVFormatContext *context, AVPacket *packet) { return kff.av_read_frame(context, packet); }
void kf_avformat_close_input(AVFormatContext **context) { kff.avformat_close_input(context); }
AVDictionaryEntry *kf_av_dict_get(const AVDictionary *dictionary, const char *key, const AVDictionaryEntry *previous, int flags) {
    return kff.av_dict_get(dictionary, key, previous, flags);
}
int kf_av_dict_set(AVDictionary **dictionary, const char *key, const char *value, int flags) {
    return kff.av_dict_set(dictionary, key, value, flags);
}
void kf_av_dict_free(AVDictionary **dictionary) { kff.av_dict_free(dictionary); }
int kf_avcodec_parameters_to_context(AVCodecContext *context, const AVCodecParameters *parameters) {
    return kff.avcodec_parameters_to_context(context, parameters);
}
const char *kf_avcodec_get_name(enum AVCodecID id) { return kff.avcodec_get_name(id); }
int kf_swr_alloc_set_opts2(SwrContext **context, const AVChannelLayout *outLayout, enum AVSampleFormat outFormat, int outRate,
                           const AVChannelLayout *inLayout, enum AVSampleFormat inFormat, int inRate, int logOffset, void *logContext) {
    return kff.swr_alloc_set_opts2(context, outLayout, outFormat, outRate, inLayout, inFormat, inRate, logOffset, logContext);
}
int kf_swr_init(SwrContext *context) { return kff.swr_init(context); }
void kf_swr_free(SwrContext **context) { kff.swr_free(context); }
int kf_swr_convert(SwrContext *context, uint8_t **output, int outCount, const uint8_t **input, int inCount) {
    return kff.swr_convert(context, output, outCount, input, inCount);
}
int64_t kf_swr_get_delay(SwrContext *context, int64_t base) { return kff.swr_get_delay(context, base); }
int kf_av_opt_set_int(void *object, const char *name, int64_t value, int searchFlags) { return kff.av_opt_set_int(object, name, value, searchFlags); }
int kf_av_opt_set_double(void *object, const char *name, double value, int searchFlags) { return kff.av_opt_set_double(object, name, value, searchFlags); }
void kf_av_channel_layout_uninit(AVChannelLayout *layout) { kff.av_channel_layout_uninit(layout); }
int kf_av_channel_layout_describe(const AVChannelLayout *layout, char *buffer, size_t size) {
    return kff.av_channel_layout_describe(layout, buffer, size);
}
int kf_av_get_bytes_per_sample(enum AVSampleFormat format) { return kff.av_get_bytes_per_sample(format); }
int kf_av_sample_fmt_is_planar(enum AVSampleFormat format) { return kff.av_sample_fmt_is_planar(format); }

int kf_av_channel_layout_from_mask(AVChannelLayout *layout, uint64_t mask) { return kf.av_channel_layout_from_mask(layout, mask); }

// --- libavformat reading through callbacks ------------------------------------------------------

/// What the AVIOContext's opaque points to: the caller's reader and where libavformat is.
typedef struct {
    void *opaque;
    int64_t size;
    int64_t position;
    int (*read_at)(void *, int64_t, uint8_t *, int);
} kf_callback_input;

static int kf_callback_read(void *opaque, uint8_t *buffer, int size) {
    kf_callback_input *input = opaque;
    if (input->position >= input->size) return AVERROR_EOF;
    int64_t left = input->size - input->position;
    int count = input->read_at(input->opaque, input->position, buffer, left < size ? (int)left : size);
    if (count == 0) return AVERROR_EOF;
    if (count > 0) input->position += count;
    return count;
}

static int64_t kf_callback_seek(void *opaque, int64_t offset, int whence) {
    kf_callback_input *input = opaque;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return input->size;
    case SEEK_SET: break;
    case SEEK_CUR: offset += input->position; break;
    case SEEK_END: offset += input->size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset < 0) return AVERROR(EINVAL);
    input->position = offset;
    return offset;
}

/// Frees the AVIOContext made by kf_avformat_open_callbacks, its buffer and its reader.
static void kf_callback_io_free(AVIOContext **io) {
    if (!*io) return;
    kf_callback_input *input = (*io)->opaque;
    kff.av_freep(&(*io)->buffer);
    kff.avio_context_free(io);
    kff.av_freep(&input);
}

int kf_avformat_open_callbacks(AVFormatContext **context, void *opaque, int64_t size,
                               int (*read_at)(void *opaque, int64_t offset, uint8_t *buffer, int count), AVDictionary **options) {
    *context = NULL;
    // FFmpeg's own buffer for a file (IO_BUFFER_SIZE): a header's reads come in few calls.
    enum { buffer_size = 32 << 10 };
    kf_callback_input *input = kff.av_malloc(sizeof *input);
    unsigned char *buffer = kff.av_malloc(buffer_size);
    AVFormatContext *made = kff.avformat_alloc_context();
    if (!input || !buffer || !made) {
        kff.av_freep(&input);
        kff.av_freep(&buffer);
        kff.avformat_close_input(&made);
        return AVERROR(ENOMEM);
    }
    *input = (kf_callback_input){ .opaque = opaque, .size = size, .position = 0, .read_at = read_at };
    AVIOContext *io = kff.avio_alloc_context(buffer, buffer_size, 0, input, kf_callback_read, NULL, kf_callback_seek);
    if (!io) {
        kff.av_freep(&input);
        kff.av_freep(&buffer);
        kff.avformat_close_input(&made);
        return AVERROR(ENOMEM);
    }
    made->pb = io;
    made->flags |= AVFMT_FLAG_CUSTOM_IO;
    // On failure avformat_open_input frees the format context, but not a caller's AVIOContext.
    int code = kff.avformat_open_input(&made, NULL, NULL, options);
    if (code < 0) {
        kf_callback_io_free(&io);
        return code;
    }
    *context = made;
    return code;
}

void kf_avformat_close_callbacks(AVFormatContext **context) {
    if (!*context) return;
    AVIOContext *io = (*context)->pb;
    kff.avformat_close_input(context);
    kf_callback_io_free(&io);
}
