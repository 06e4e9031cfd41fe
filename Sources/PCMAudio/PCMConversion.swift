public import MediaCore

/// Conversions between the PCM layouts capture, files and the codec use, with the same
/// arithmetic as FFmpeg's libswresample, so that our encoder sees the same floats as
/// `ffmpeg -c:a aac` and our decoder writes the same integers as `ffmpeg -i IN OUT.wav`:
///
/// - to float: `u8` → `(x − 128) / 128`, `s16` → `x / 32768`, `s24`/`s32` → `x / 2³¹`;
/// - from float: `s16` → `clip(lrint(x · 32768))`, `s32` → `clip(llrint(x · 2³¹))`.
///
/// Each function converts straight from the source buffer into the destination: one pass, no
/// intermediate copy.
public enum PCMConversion {
    /// Converts `frameCount` frames starting at frame `frameOffset` of `source` (laid out as
    /// `format` says; a planar source holds `sourceFrameCount` frames per plane) into planar
    /// Float32 channel buffers, writing at `destinationOffset` of each.
    ///
    /// - Precondition: `destination.count == format.channelCount`, each buffer has room, and the
    ///   source holds the frames (the caller sized them; nothing here reads from a file).
    @inlinable
    public static func toPlanarFloat(
        source: UnsafeRawBufferPointer, format: PCMFormat, sourceFrameCount: Int,
        frameOffset: Int, frameCount: Int,
        destination: [UnsafeMutablePointer<Float>], destinationOffset: Int
    ) {
        let channels = format.channelCount
        let width = format.sampleFormat.bytesPerSample
        precondition(destination.count == channels, "one destination plane per channel")
        precondition(frameOffset >= 0 && frameCount >= 0 && frameOffset + frameCount <= sourceFrameCount)
        precondition(source.count >= sourceFrameCount * channels * width, "source shorter than its frame count")
        guard frameCount > 0, let base = source.baseAddress else { return }
        for channel in 0..<channels {
            // Byte position of sample (frame f, channel c) = start + f * step.
            let start: Int
            let step: Int
            if format.isInterleaved {
                start = (frameOffset * channels + channel) * width
                step = channels * width
            } else {
                start = (channel * sourceFrameCount + frameOffset) * width
                step = width
            }
            let out = destination[channel] + destinationOffset
            var position = base + start
            switch format.sampleFormat {
            case .uint8:
                for index in 0..<frameCount {
                    out[index] = Float(Int(position.load(as: UInt8.self)) - 0x80) * (1.0 / 128.0)
                    position += step
                }
            case .int16:
                for index in 0..<frameCount {
                    out[index] = Float(Int16(littleEndian: position.loadUnaligned(as: Int16.self))) * (1.0 / 32768.0)
                    position += step
                }
            case .int24:
                for index in 0..<frameCount {
                    let value = Int32(position.load(fromByteOffset: 0, as: UInt8.self)) << 8
                        | Int32(position.load(fromByteOffset: 1, as: UInt8.self)) << 16
                        | Int32(position.load(fromByteOffset: 2, as: UInt8.self)) << 24
                    out[index] = Float(value) * (1.0 / 2_147_483_648.0)
                    position += step
                }
            case .int32:
                for index in 0..<frameCount {
                    out[index] = Float(Int32(littleEndian: position.loadUnaligned(as: Int32.self))) * (1.0 / 2_147_483_648.0)
                    position += step
                }
            case .float32:
                for index in 0..<frameCount {
                    out[index] = Float(bitPattern: UInt32(littleEndian: position.loadUnaligned(as: UInt32.self)))
                    position += step
                }
            case .float64:
                for index in 0..<frameCount {
                    out[index] = Float(Double(bitPattern: UInt64(littleEndian: position.loadUnaligned(as: UInt64.self))))
                    position += step
                }
            }
        }
    }

    /// Appends `frameCount` frames from planar Float32 channel buffers (starting at
    /// `frameOffset`) to `output` as interleaved little-endian `sampleFormat`.
    ///
    /// Supports `.int16`, `.int32` and `.float32` (what a decoder writes).
    @inlinable
    public static func appendInterleaved(
        planes: [UnsafePointer<Float>], frameOffset: Int, frameCount: Int,
        as sampleFormat: PCMSampleFormat, to output: inout [UInt8]
    ) {
        precondition([.int16, .int32, .float32].contains(sampleFormat), "decoder output is s16, s32 or f32")
        let channels = planes.count
        guard frameCount > 0, channels > 0 else { return }
        let width = sampleFormat.bytesPerSample
        let oldCount = output.count
        let added = frameCount * channels * width
        output.append(contentsOf: repeatElement(0, count: added))
        if sampleFormat == .int16 {
            // The hot path of decoding: frame by frame, sequential writes, no libm call.
            output.withUnsafeMutableBytes { raw in
                let out = (raw.baseAddress! + oldCount).assumingMemoryBound(to: Int16.self)
                switch channels {
                case 1:
                    let mono = planes[0] + frameOffset
                    for frame in 0..<frameCount { out[frame] = int16(mono[frame]).littleEndian }
                case 2:
                    let left = planes[0] + frameOffset, right = planes[1] + frameOffset
                    for frame in 0..<frameCount {
                        out[2 * frame] = int16(left[frame]).littleEndian
                        out[2 * frame + 1] = int16(right[frame]).littleEndian
                    }
                default:
                    var index = 0
                    for frame in frameOffset..<(frameOffset + frameCount) {
                        for channel in 0..<channels {
                            out[index] = int16(planes[channel][frame]).littleEndian
                            index += 1
                        }
                    }
                }
            }
            return
        }
        output.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress! + oldCount
            for channel in 0..<channels {
                let input = planes[channel] + frameOffset
                var position = base + channel * width
                let step = channels * width
                switch sampleFormat {
                case .int16:
                    for index in 0..<frameCount {
                        position.storeBytes(of: int16(input[index]).littleEndian, as: Int16.self)
                        position += step
                    }
                case .int32:
                    for index in 0..<frameCount {
                        position.storeBytes(of: int32(input[index]).littleEndian, as: Int32.self)
                        position += step
                    }
                default:
                    for index in 0..<frameCount {
                        position.storeBytes(of: input[index].bitPattern.littleEndian, as: UInt32.self)
                        position += step
                    }
                }
            }
        }
    }

    /// Converts `frameCount` frames starting at frame `frameOffset` of `source` (laid out as
    /// `format` says; a planar source holds `sourceFrameCount` frames per plane) to `target`
    /// (`.int16`, `.int32` or `.float32`) in `destination`: one plane per channel when
    /// `planar`, else one interleaved plane; written from frame `destinationOffset` on.
    ///
    /// Integers stay exact where the target holds them: 8 and 16 bits to 16 or 32, 24 and 32
    /// bits to 32, left-aligned (`s24` → `s32` is `x << 8`, as libswresample does), so a lossless
    /// encoder is given the source's very samples. Floats convert as ``int16(_:)`` and
    /// ``int32(_:)`` do; integers to float as ``toPlanarFloat(source:format:sourceFrameCount:frameOffset:frameCount:destination:destinationOffset:)``.
    /// A 24- or 32-bit integer source to `.int16` keeps the top 16 bits.
    ///
    /// - Precondition: `destination` holds one plane (interleaved) or one per channel (planar),
    ///   each with room, and the source holds the frames.
    @inlinable
    public static func convert(
        source: UnsafeRawBufferPointer, format: PCMFormat, sourceFrameCount: Int, frameOffset: Int, frameCount: Int,
        to target: PCMSampleFormat, planar: Bool, destination: [UnsafeMutableRawPointer], destinationOffset: Int
    ) {
        let channels = format.channelCount
        let width = format.sampleFormat.bytesPerSample
        precondition([.int16, .int32, .float32].contains(target), "a codec takes s16, s32 or f32")
        precondition(destination.count == (planar ? channels : 1), "one plane, or one per channel")
        precondition(frameOffset >= 0 && frameCount >= 0 && frameOffset + frameCount <= sourceFrameCount)
        precondition(source.count >= sourceFrameCount * channels * width, "source shorter than its frame count")
        guard frameCount > 0, let base = source.baseAddress else { return }
        let targetWidth = target.bytesPerSample
        for channel in 0..<channels {
            let start = format.isInterleaved ? (frameOffset * channels + channel) * width : (channel * sourceFrameCount + frameOffset) * width
            let step = format.isInterleaved ? channels * width : width
            let out = planar ? destination[channel] + destinationOffset * targetWidth
                : destination[0] + (destinationOffset * channels + channel) * targetWidth
            let outStep = planar ? targetWidth : channels * targetWidth
            var position = base + start
            var written = out
            if format.sampleFormat == .float32 || format.sampleFormat == .float64 {
                for _ in 0..<frameCount {
                    let value = format.sampleFormat == .float32
                        ? Float(bitPattern: UInt32(littleEndian: position.loadUnaligned(as: UInt32.self)))
                        : Float(Double(bitPattern: UInt64(littleEndian: position.loadUnaligned(as: UInt64.self))))
                    switch target {
                    case .int16: written.storeBytes(of: int16(value).littleEndian, as: Int16.self)
                    case .int32: written.storeBytes(of: int32(value).littleEndian, as: Int32.self)
                    default: written.storeBytes(of: value.bitPattern.littleEndian, as: UInt32.self)
                    }
                    position += step
                    written += outStep
                }
                continue
            }
            for _ in 0..<frameCount {
                // The sample left-aligned in 32 bits.
                let value: Int32 = switch format.sampleFormat {
                case .uint8: (Int32(position.load(as: UInt8.self)) - 0x80) << 24
                case .int16: Int32(Int16(littleEndian: position.loadUnaligned(as: Int16.self))) << 16
                case .int24: Int32(position.load(fromByteOffset: 0, as: UInt8.self)) << 8
                    | Int32(position.load(fromByteOffset: 1, as: UInt8.self)) << 16
                    | Int32(position.load(fromByteOffset: 2, as: UInt8.self)) << 24
                default: Int32(littleEndian: position.loadUnaligned(as: Int32.self))
                }
                switch target {
                case .int16: written.storeBytes(of: Int16(truncatingIfNeeded: value >> 16).littleEndian, as: Int16.self)
                case .int32: written.storeBytes(of: value.littleEndian, as: Int32.self)
                default: written.storeBytes(of: (Float(value) * (1.0 / 2_147_483_648.0)).bitPattern.littleEndian, as: UInt32.self)
                }
                position += step
                written += outStep
            }
        }
    }

    /// `av_clip_int16(lrintf(x * 32768))`, with NaN as 0.
    ///
    /// Clamping first and rounding after gives the same result (the bounds are integers), and for
    /// |v| < 2²² adding and subtracting 1.5·2²³ rounds half to even in the FPU's default mode,
    /// as `lrintf` does, without a libm call.
    @inlinable
    public static func int16(_ sample: Float) -> Int16 {
        var scaled = sample * 32768
        scaled = scaled == scaled ? scaled : 0          // NaN → 0
        scaled = scaled < -32768 ? -32768 : scaled
        scaled = scaled > 32767 ? 32767 : scaled
        let magic: Float = 12_582_912   // 1.5 × 2^23
        return Int16(truncatingIfNeeded: Int32((scaled + magic) - magic))
    }

    /// `av_clipl_int32(llrintf(x * 2³¹))`, with NaN as 0.
    @inlinable
    public static func int32(_ sample: Float) -> Int32 {
        let scaled = (Double(sample) * 2_147_483_648).rounded(.toNearestOrEven)
        if scaled >= 2_147_483_647 { return .max }
        if scaled <= -2_147_483_648 { return .min }
        return scaled.isNaN ? 0 : Int32(scaled)
    }
}
