// Lazy binding of the libsrt functions Publishing uses: see include/CSRT.h.
#include "CSRT.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <syslog.h>

static pthread_once_t kf_srt_once = PTHREAD_ONCE_INIT;
static int kf_srt_status = -1;
static char kf_srt_error[512] = "libsrt not loaded";

static struct {
    int (*srt_startup)(void);
    void (*srt_setloglevel)(int);
    SRTSOCKET (*srt_create_socket)(void);
    int (*srt_setsockflag)(SRTSOCKET, SRT_SOCKOPT, const void *, int);
    int (*srt_getsockflag)(SRTSOCKET, SRT_SOCKOPT, void *, int *);
    int (*srt_connect)(SRTSOCKET, const struct sockaddr *, int);
    int (*srt_close)(SRTSOCKET);
    int (*srt_sendmsg2)(SRTSOCKET, const char *, int, SRT_MSGCTRL *);
    SRT_SOCKSTATUS (*srt_getsockstate)(SRTSOCKET);
    int (*srt_getlasterror)(int *);
    const char *(*srt_getlasterror_str)(void);
    void (*srt_clearlasterror)(void);
    int (*srt_getrejectreason)(SRTSOCKET);
    const char *(*srt_rejectreason_str)(int);
    int (*srt_getsndbuffer)(SRTSOCKET, size_t *, size_t *);
    uint32_t (*srt_getversion)(void);
} kf_srt;

#define KF_SRT_BIND(handle, name)                                                                 \
    do {                                                                                          \
        *(void **)(&kf_srt.name) = dlsym(handle, #name);                                          \
        if (!kf_srt.name) {                                                                       \
            snprintf(kf_srt_error, sizeof kf_srt_error, "libsrt has no symbol %s (SRT 1.5 is needed: "  \
                     "install libsrt1.5-openssl)", #name);                                        \
            return;                                                                               \
        }                                                                                         \
    } while (0)

static void kf_srt_load_once(void) {
    // OpenSSL's build first (Debian's default), then GnuTLS's: the same API and wire protocol.
    void *handle = dlopen("libsrt.so.1.5", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        char first[200];
        snprintf(first, sizeof first, "%s", dlerror());
        handle = dlopen("libsrt-gnutls.so.1.5", RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            snprintf(kf_srt_error, sizeof kf_srt_error,
                     "cannot load libsrt: %s (install libsrt1.5-openssl, or libsrt1.5-gnutls)", first);
            return;
        }
    }
    KF_SRT_BIND(handle, srt_startup);
    KF_SRT_BIND(handle, srt_setloglevel);
    KF_SRT_BIND(handle, srt_create_socket);
    KF_SRT_BIND(handle, srt_setsockflag);
    KF_SRT_BIND(handle, srt_getsockflag);
    KF_SRT_BIND(handle, srt_connect);
    KF_SRT_BIND(handle, srt_close);
    KF_SRT_BIND(handle, srt_sendmsg2);
    KF_SRT_BIND(handle, srt_getsockstate);
    KF_SRT_BIND(handle, srt_getlasterror);
    KF_SRT_BIND(handle, srt_getlasterror_str);
    KF_SRT_BIND(handle, srt_clearlasterror);
    KF_SRT_BIND(handle, srt_getrejectreason);
    KF_SRT_BIND(handle, srt_rejectreason_str);
    KF_SRT_BIND(handle, srt_getsndbuffer);
    KF_SRT_BIND(handle, srt_getversion);
    // Failures reach the caller as errors (refused, timed out, lost), not as libsrt's own lines
    // on stderr.
    kf_srt.srt_setloglevel(LOG_CRIT);
    if (kf_srt.srt_startup() < 0) {
        snprintf(kf_srt_error, sizeof kf_srt_error, "srt_startup failed: %s", kf_srt.srt_getlasterror_str());
        return;
    }
    kf_srt_status = 0;
}

int kf_srt_load(void) {
    pthread_once(&kf_srt_once, kf_srt_load_once);
    return kf_srt_status;
}

const char *kf_srt_load_error(void) { return kf_srt_error; }

SRTSOCKET kf_srt_create_socket(void) { return kf_srt.srt_create_socket(); }
int kf_srt_setsockflag(SRTSOCKET socket, SRT_SOCKOPT option, const void *value, int length) {
    return kf_srt.srt_setsockflag(socket, option, value, length);
}
int kf_srt_getsockflag(SRTSOCKET socket, SRT_SOCKOPT option, void *value, int *length) {
    return kf_srt.srt_getsockflag(socket, option, value, length);
}
int kf_srt_connect(SRTSOCKET socket, const struct sockaddr *address, int length) {
    return kf_srt.srt_connect(socket, address, length);
}
int kf_srt_close(SRTSOCKET socket) { return kf_srt.srt_close(socket); }
int kf_srt_sendmsg2(SRTSOCKET socket, const char *buffer, int length, SRT_MSGCTRL *control) {
    return kf_srt.srt_sendmsg2(socket, buffer, length, control);
}
SRT_SOCKSTATUS kf_srt_getsockstate(SRTSOCKET socket) { return kf_srt.srt_getsockstate(socket); }
int kf_srt_getlasterror(int *systemError) { return kf_srt.srt_getlasterror(systemError); }
const char *kf_srt_getlasterror_str(void) { return kf_srt.srt_getlasterror_str(); }
void kf_srt_clearlasterror(void) { kf_srt.srt_clearlasterror(); }
int kf_srt_getrejectreason(SRTSOCKET socket) { return kf_srt.srt_getrejectreason(socket); }
const char *kf_srt_rejectreason_str(int reason) { return kf_srt.srt_rejectreason_str(reason); }
int kf_srt_getsndbuffer(SRTSOCKET socket, size_t *blocks, size_t *bytes) {
    return kf_srt.srt_getsndbuffer(socket, blocks, bytes);
}
uint32_t kf_srt_getversion(void) { return kf_srt.srt_getversion(); }
