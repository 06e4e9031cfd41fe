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
    int (*av_strerror)(int, char *, size_t);
    int (*av_opt_set)(void *, const char *, const char *, int);
} kf;

static void *kf_open(const char *name) {
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) snprintf(kf_error, sizeof kf_error, "cannot load %s: %s (install libavcodec-dev / libavcodec59)", name, dlerror());
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
    KF_BIND(avutil, av_log_set_level);
    KF_BIND(avutil, av_channel_layout_copy);
    KF_BIND(avutil, av_channel_layout_default);
    KF_BIND(avutil, av_strerror);
    KF_BIND(avutil, av_opt_set);
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
