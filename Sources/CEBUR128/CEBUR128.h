// libebur128 (Debian 12's libebur128-dev, 1.2.6): EBU R 128 / ITU-R BS.1770 loudness, loudness
// range and true peak, for KeyFrameKit's AudioCodec module. Its API imports into Swift as is.
#ifndef KEYFRAME_CEBUR128_H
#define KEYFRAME_CEBUR128_H
#include <ebur128.h>
#endif
