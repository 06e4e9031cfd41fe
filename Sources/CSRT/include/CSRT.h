// libsrt 1.5 (Debian 12) for KeyFrameKit's Publishing module.
//
// libsrt is not linked: kf_srt_load() opens it with dlopen() the first time an srt:// destination
// connects (libsrt.so.1.5 from libsrt1.5-openssl, else libsrt-gnutls.so.1.5 from
// libsrt1.5-gnutls), calls srt_startup() once, and the kf_srt_ functions below call through the
// resolved symbols. Commands that never publish over SRT never load it, and a machine without
// libsrt runs everything else. The types and constants come from SRT's own headers
// (libsrt-openssl-dev).
#ifndef KEYFRAME_CSRT_H
#define KEYFRAME_CSRT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <srt/srt.h>
#include <srt/access_control.h>

/// Loads libsrt once (thread-safe) and calls srt_startup(). Returns 0, or -1 with
/// kf_srt_load_error().
int kf_srt_load(void);
/// Why kf_srt_load() failed: the library or symbol that could not be found, and the Debian
/// package that provides it.
const char *kf_srt_load_error(void);

// The libsrt functions Publishing calls, by the same signatures. Call kf_srt_load() first.
SRTSOCKET kf_srt_create_socket(void);
int kf_srt_setsockflag(SRTSOCKET socket, SRT_SOCKOPT option, const void *value, int length);
int kf_srt_getsockflag(SRTSOCKET socket, SRT_SOCKOPT option, void *value, int *length);
int kf_srt_connect(SRTSOCKET socket, const struct sockaddr *address, int length);
int kf_srt_close(SRTSOCKET socket);
int kf_srt_sendmsg2(SRTSOCKET socket, const char *buffer, int length, SRT_MSGCTRL *control);
SRT_SOCKSTATUS kf_srt_getsockstate(SRTSOCKET socket);
/// The calling thread's last SRT error (an SRT_ERRNO), and the system errno behind it in
/// `systemError` (may be NULL).
int kf_srt_getlasterror(int *systemError);
/// The text of the calling thread's last SRT error.
const char *kf_srt_getlasterror_str(void);
void kf_srt_clearlasterror(void);
/// Why a connection was rejected: an SRT_REJECT_REASON below 1000, a server's code (SRT_REJX_*)
/// from 1000.
int kf_srt_getrejectreason(SRTSOCKET socket);
/// libsrt's words for an SRT_REJECT_REASON.
const char *kf_srt_rejectreason_str(int reason);
/// Unacknowledged data in the socket's send buffer: packets and bytes.
int kf_srt_getsndbuffer(SRTSOCKET socket, size_t *blocks, size_t *bytes);
/// The library's version, 0x00MMmmpp.
uint32_t kf_srt_getversion(void);

/// A linger option value (SRTO_LINGER): on for `seconds`, or off.
static inline struct linger kf_srt_linger(int on, int seconds) {
    struct linger value;
    value.l_onoff = on;
    value.l_linger = seconds;
    return value;
}

#endif
