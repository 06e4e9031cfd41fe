// Lazy binding of libFLAC's stream decoder, and its callbacks: see include/CFLAC.h.
#include "CFLAC.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t kf_flac_once = PTHREAD_ONCE_INIT;
static int kf_flac_status = -1;
static char kf_flac_error[512] = "libFLAC not loaded";

static struct {
    FLAC__StreamDecoder *(*stream_decoder_new)(void);
    void (*stream_decoder_delete)(FLAC__StreamDecoder *);
    FLAC__bool (*stream_decoder_set_md5_checking)(FLAC__StreamDecoder *, FLAC__bool);
    FLAC__StreamDecoderInitStatus (*stream_decoder_init_file)(FLAC__StreamDecoder *, const char *, FLAC__StreamDecoderWriteCallback,
                                                              FLAC__StreamDecoderMetadataCallback, FLAC__StreamDecoderErrorCallback, void *);
    FLAC__bool (*stream_decoder_process_single)(FLAC__StreamDecoder *);
    FLAC__bool (*stream_decoder_process_until_end_of_metadata)(FLAC__StreamDecoder *);
    FLAC__bool (*stream_decoder_finish)(FLAC__StreamDecoder *);
    FLAC__StreamDecoderState (*stream_decoder_get_state)(const FLAC__StreamDecoder *);
    FLAC__bool (*stream_decoder_get_decode_position)(const FLAC__StreamDecoder *, FLAC__uint64 *);
    const char *const *StreamDecoderStateString;
    const char *const *StreamDecoderErrorStatusString;
    const char *const *StreamDecoderInitStatusString;
} kfl;

#define KFL_LIBRARY "libFLAC.so.12"

#define KFL_BIND(handle, field, symbol)                                                           \
    do {                                                                                          \
        *(void **)(&kfl.field) = dlsym(handle, #symbol);                                          \
        if (!kfl.field) {                                                                         \
            snprintf(kf_flac_error, sizeof kf_flac_error, "%s has no symbol %s (install libflac12 1.4 or later)", \
                     KFL_LIBRARY, #symbol);                                                       \
            return;                                                                               \
        }                                                                                         \
    } while (0)

static void kf_flac_load_once(void) {
    void *flac = dlopen(KFL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!flac) {
        snprintf(kf_flac_error, sizeof kf_flac_error, "cannot load %s: %s (install libFLAC: apt-get install libflac12)",
                 KFL_LIBRARY, dlerror());
        return;
    }
    KFL_BIND(flac, stream_decoder_new, FLAC__stream_decoder_new);
    KFL_BIND(flac, stream_decoder_delete, FLAC__stream_decoder_delete);
    KFL_BIND(flac, stream_decoder_set_md5_checking, FLAC__stream_decoder_set_md5_checking);
    KFL_BIND(flac, stream_decoder_init_file, FLAC__stream_decoder_init_file);
    KFL_BIND(flac, stream_decoder_process_single, FLAC__stream_decoder_process_single);
    KFL_BIND(flac, stream_decoder_process_until_end_of_metadata, FLAC__stream_decoder_process_until_end_of_metadata);
    KFL_BIND(flac, stream_decoder_finish, FLAC__stream_decoder_finish);
    KFL_BIND(flac, stream_decoder_get_state, FLAC__stream_decoder_get_state);
    KFL_BIND(flac, stream_decoder_get_decode_position, FLAC__stream_decoder_get_decode_position);
    KFL_BIND(flac, StreamDecoderStateString, FLAC__StreamDecoderStateString);
    KFL_BIND(flac, StreamDecoderErrorStatusString, FLAC__StreamDecoderErrorStatusString);
    KFL_BIND(flac, StreamDecoderInitStatusString, FLAC__StreamDecoderInitStatusString);
    kf_flac_status = 0;
}

int kf_flac_load(void) {
    pthread_once(&kf_flac_once, kf_flac_load_once);
    return kf_flac_status;
}

const char *kf_flac_load_error(void) { return kf_flac_error; }

// --- callbacks ----------------------------------------------------------------------------------

// One frame, interleaved and left-justified, appended to what the stream's buffer holds from
// this kf_flac_stream_next() (libFLAC writes its silence for lost frames first, then the frame).
static FLAC__StreamDecoderWriteStatus kf_flac_write(const FLAC__StreamDecoder *decoder, const FLAC__Frame *frame,
                                                    const FLAC__int32 *const buffer[], void *client) {
    (void)decoder;
    kf_flac_stream *stream = client;
    uint32_t length = frame->header.blocksize, channels = frame->header.channels, bits = frame->header.bits_per_sample;
    if (bits == 0 || bits > 32 || channels == 0) return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
    if (stream->frame_count > 0 && channels != stream->frame_channels) return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
    size_t used = (size_t)stream->frame_length * channels * 4;
    size_t needed = used + (size_t)length * channels * 4;
    if (needed > stream->frame_capacity) {
        uint8_t *grown = realloc(stream->frame_bytes, needed);
        if (!grown) {
            stream->allocation_failed = 1;
            return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
        }
        stream->frame_bytes = grown;
        stream->frame_capacity = needed;
    }
    unsigned shift = 32 - bits;
    uint8_t *out = stream->frame_bytes + used;
    for (uint32_t index = 0; index < length; index++) {
        for (uint32_t channel = 0; channel < channels; channel++) {
            uint32_t value = (uint32_t)buffer[channel][index] << shift;
            out[0] = (uint8_t)value;
            out[1] = (uint8_t)(value >> 8);
            out[2] = (uint8_t)(value >> 16);
            out[3] = (uint8_t)(value >> 24);
            out += 4;
        }
    }
    stream->frame_count++;
    stream->frame_length += length;
    stream->frame_channels = channels;
    stream->last_frame_length = length;
    stream->last_frame_bits = bits;
    // libFLAC converts a fixed-blocksize stream's frame number to a sample number.
    stream->last_frame_sample_number = frame->header.number.sample_number;
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

static void kf_flac_metadata(const FLAC__StreamDecoder *decoder, const FLAC__StreamMetadata *metadata, void *client) {
    (void)decoder;
    kf_flac_stream *stream = client;
    if (metadata->type != FLAC__METADATA_TYPE_STREAMINFO) return;
    const FLAC__StreamMetadata_StreamInfo *info = &metadata->data.stream_info;
    stream->has_stream_info = 1;
    stream->sample_rate = info->sample_rate;
    stream->channels = info->channels;
    stream->bits_per_sample = info->bits_per_sample;
    stream->min_block_size = info->min_blocksize;
    stream->max_block_size = info->max_blocksize;
    stream->total_samples = info->total_samples;
}

static void kf_flac_error_callback(const FLAC__StreamDecoder *decoder, FLAC__StreamDecoderErrorStatus status, void *client) {
    (void)decoder;
    kf_flac_stream *stream = client;
    if (stream->error_count == 0) stream->first_error = status;
    if (status == FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH) stream->crc_mismatch = 1;
    stream->error_count++;
}

// --- the stream ---------------------------------------------------------------------------------

kf_flac_stream *kf_flac_stream_open(const char *path, FLAC__StreamDecoderInitStatus *status) {
    *status = FLAC__STREAM_DECODER_INIT_STATUS_MEMORY_ALLOCATION_ERROR;
    kf_flac_stream *stream = calloc(1, sizeof *stream);
    if (!stream) return NULL;
    stream->decoder = kfl.stream_decoder_new();
    if (!stream->decoder) {
        free(stream);
        return NULL;
    }
    kfl.stream_decoder_set_md5_checking(stream->decoder, 1);
    *status = kfl.stream_decoder_init_file(stream->decoder, path, kf_flac_write, kf_flac_metadata, kf_flac_error_callback, stream);
    if (*status != FLAC__STREAM_DECODER_INIT_STATUS_OK) {
        kfl.stream_decoder_delete(stream->decoder);
        free(stream);
        return NULL;
    }
    return stream;
}

void kf_flac_stream_close(kf_flac_stream *stream) {
    if (!stream) return;
    kfl.stream_decoder_delete(stream->decoder);
    free(stream->frame_bytes);
    free(stream);
}

static void kf_flac_stream_reset_call(kf_flac_stream *stream) {
    stream->frame_count = 0;
    stream->frame_length = 0;
    stream->error_count = 0;
    stream->crc_mismatch = 0;
    FLAC__uint64 position;
    stream->start_position = kfl.stream_decoder_get_decode_position(stream->decoder, &position) ? position : UINT64_MAX;
}

FLAC__bool kf_flac_stream_read_metadata(kf_flac_stream *stream) {
    kf_flac_stream_reset_call(stream);
    return kfl.stream_decoder_process_until_end_of_metadata(stream->decoder);
}

FLAC__bool kf_flac_stream_next(kf_flac_stream *stream) {
    kf_flac_stream_reset_call(stream);
    return kfl.stream_decoder_process_single(stream->decoder);
}

FLAC__StreamDecoderState kf_flac_stream_state(const kf_flac_stream *stream) { return kfl.stream_decoder_get_state(stream->decoder); }

FLAC__bool kf_flac_stream_finish(kf_flac_stream *stream) { return kfl.stream_decoder_finish(stream->decoder); }

const char *kf_flac_state_string(FLAC__StreamDecoderState state) {
    if ((unsigned)state > FLAC__STREAM_DECODER_UNINITIALIZED) return "unknown decoder state";
    return kfl.StreamDecoderStateString[state];
}

const char *kf_flac_error_string(FLAC__StreamDecoderErrorStatus status) {
    if ((unsigned)status > FLAC__STREAM_DECODER_ERROR_STATUS_BAD_METADATA) return "unknown error";
    return kfl.StreamDecoderErrorStatusString[status];
}

const char *kf_flac_init_status_string(FLAC__StreamDecoderInitStatus status) {
    if ((unsigned)status > FLAC__STREAM_DECODER_INIT_STATUS_ALREADY_INITIALIZED) return "unknown init status";
    return kfl.StreamDecoderInitStatusString[status];
}
