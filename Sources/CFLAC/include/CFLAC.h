// libFLAC 1.4 (Debian 12: libflac12) for KeyFrameKit's AudioCodec module.
//
// FFmpeg 5.1 decodes no frame of a true 32-bit FLAC stream (bits per sample 32, written by the
// flac 1.4 tool), so AudioCodec's FLACFileDecoder reads those through libFLAC. As with FFmpeg,
// the library is not linked: kf_flac_load() opens libFLAC.so.12 with dlopen() the first time
// such a file is decoded, so every other job never loads it. The types and constants come from
// libFLAC's own headers (libflac-dev).
//
// libFLAC's stream decoder calls back (write, metadata, error); those callbacks are written here
// in C, around a kf_flac_stream the caller owns: kf_flac_stream_next() decodes one frame with
// FLAC__stream_decoder_process_single() and leaves it, interleaved, in a buffer of the stream,
// so memory stays one frame whatever the file's length.
#ifndef KEYFRAME_CFLAC_H
#define KEYFRAME_CFLAC_H

#include <stddef.h>
#include <stdint.h>
#include <FLAC/stream_decoder.h>

/// Loads libFLAC once (thread-safe). Returns 0, or -1 with kf_flac_load_error().
int kf_flac_load(void);
/// Why kf_flac_load() failed: the library or symbol that could not be found, and the package
/// that provides it.
const char *kf_flac_load_error(void);

/// One FLAC file being decoded: the libFLAC decoder, what its callbacks reported, and the last
/// frame it decoded. Made by kf_flac_stream_open(), freed by kf_flac_stream_close().
typedef struct kf_flac_stream {
    /// The libFLAC decoder (owned).
    FLAC__StreamDecoder *decoder;

    /// Whether the STREAMINFO block has been read (kf_flac_stream_read_metadata()).
    int has_stream_info;
    /// STREAMINFO: frames per second.
    uint32_t sample_rate;
    /// STREAMINFO: channels (1 to 8).
    uint32_t channels;
    /// STREAMINFO: bits per sample (4 to 32).
    uint32_t bits_per_sample;
    /// STREAMINFO: the smallest and largest block size in samples.
    uint32_t min_block_size, max_block_size;
    /// STREAMINFO: samples per channel in the stream, 0 when unknown.
    uint64_t total_samples;

    /// Frames libFLAC wrote during the last kf_flac_stream_next(): 0 at the end of the stream,
    /// 1 for a frame, more when libFLAC put silence in place of lost frames (it does, up to 5 s
    /// or 50 frames, when a frame's sample number is past the end of the one before) ahead of
    /// the frame it decoded.
    uint32_t frame_count;
    /// Samples per channel of all of them, and channels.
    uint32_t frame_length, frame_channels;
    /// The decoded frame (the last written): samples per channel, bits per sample, and its first
    /// sample's number.
    uint32_t last_frame_length, last_frame_bits;
    uint64_t last_frame_sample_number;
    /// The samples of all of them, in order: interleaved, signed 32-bit little-endian,
    /// left-justified (shifted up by 32 - bits per sample, so that every depth spans the full
    /// 32-bit range); frame_length * frame_channels * 4 bytes.
    uint8_t *frame_bytes;
    size_t frame_capacity;
    /// The frame could not be stored (out of memory); decoding was aborted.
    int allocation_failed;

    /// Errors libFLAC reported during the last kf_flac_stream_next() (lost sync, a bad header, a
    /// frame CRC mismatch; libFLAC 1.4 drops a frame that fails its CRC and searches on).
    uint32_t error_count;
    /// The first of them, and whether any was a frame CRC mismatch.
    FLAC__StreamDecoderErrorStatus first_error;
    int crc_mismatch;
    /// The byte offset in the file where the last kf_flac_stream_next() started reading, or
    /// UINT64_MAX when libFLAC cannot say.
    uint64_t start_position;
} kf_flac_stream;

/// Opens `path` for decoding with MD5 checking on. Returns the stream, or NULL with `*status`
/// (FLAC__STREAM_DECODER_INIT_STATUS_ERROR_OPENING_FILE, …; MEMORY_ALLOCATION_ERROR when the
/// decoder could not be made). Call kf_flac_load() first.
kf_flac_stream *kf_flac_stream_open(const char *path, FLAC__StreamDecoderInitStatus *status);
/// Finishes (if not done) and deletes the decoder, and frees the stream.
void kf_flac_stream_close(kf_flac_stream *stream);
/// Reads the metadata blocks (FLAC__stream_decoder_process_until_end_of_metadata); the
/// STREAMINFO fields are set when it returns true and has_stream_info is set.
FLAC__bool kf_flac_stream_read_metadata(kf_flac_stream *stream);
/// Decodes the next frame (FLAC__stream_decoder_process_single): frame_count says whether one was
/// decoded, error_count what libFLAC reported on the way. False for a fatal error (read error,
/// allocation failure): see kf_flac_stream_state().
FLAC__bool kf_flac_stream_next(kf_flac_stream *stream);
/// The decoder's state (FLAC__STREAM_DECODER_END_OF_STREAM at the end).
FLAC__StreamDecoderState kf_flac_stream_state(const kf_flac_stream *stream);
/// Finishes decoding (FLAC__stream_decoder_finish): false when MD5 checking was possible and
/// the decoded audio's MD5 differs from STREAMINFO's. Call once, at the end.
FLAC__bool kf_flac_stream_finish(kf_flac_stream *stream);

/// libFLAC's name for a decoder state (FLAC__StreamDecoderStateString).
const char *kf_flac_state_string(FLAC__StreamDecoderState state);
/// libFLAC's name for an error its error callback reports (FLAC__StreamDecoderErrorStatusString).
const char *kf_flac_error_string(FLAC__StreamDecoderErrorStatus status);
/// libFLAC's name for an init status (FLAC__StreamDecoderInitStatusString).
const char *kf_flac_init_status_string(FLAC__StreamDecoderInitStatus status);

#endif
