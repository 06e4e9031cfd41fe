internal import MediaCore

/// A QuickTime chapter track: a disabled text track (`hdlr` `text`, QuickTime File Format "Text
/// media") whose samples are the chapter titles, each lasting until the next chapter, referenced
/// from the audio track by a `tref/chap` box (QuickTime "Track reference atoms", `chap`). Apple's
/// players read chapters from it; FFmpeg writes it beside the Nero `chpl` likewise.
///
/// A text sample is a 16-bit length, the UTF-8 title, and an `encd` box whose value 0x100 says
/// UTF-8.
public enum ChapterTrack {
    /// The text of one sample.
    public static func sample(title: String) -> [UInt8] {
        let text = ChapterListBox.truncated(title, to: Int(UInt16.max) - 16)
        var box = BoxWriter()
        box.u16(UInt16(text.count))
        box.raw(text)
        box.box("encd") { b in b.u32(0x0000_0100) }
        return box.bytes
    }

    /// The title a text sample holds: its 16-bit length and that many bytes (UTF-16 when they
    /// start with a byte-order mark, else UTF-8); `nil` when the length overruns the sample.
    /// With `cutAt`, `bytes` is the head of a longer sample and a title longer than `cutAt`
    /// bytes is cut there.
    public static func title(fromSample bytes: [UInt8], cutAt: Int? = nil) -> String? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[0]) << 8 | Int(bytes[1])
        if let cutAt { length = min(length, max(0, cutAt)) }
        guard 2 + length <= bytes.count else { return nil }
        let text = Array(bytes[2..<(2 + length)])
        if text.count >= 2, text[0] == 0xFE, text[1] == 0xFF {
            let units = stride(from: 2, to: text.count - 1, by: 2).map { UInt16(text[$0]) << 8 | UInt16(text[$0 + 1]) }
            return String(decoding: units, as: UTF16.self)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The samples of `chapters` back to back (one chunk), and each one's size.
    public static func samples(_ chapters: [MovieChapter]) -> (bytes: [UInt8], sizes: [UInt32]) {
        var bytes: [UInt8] = []
        var sizes: [UInt32] = []
        for chapter in chapters {
            let sample = sample(title: chapter.title)
            bytes += sample
            sizes.append(UInt32(sample.count))
        }
        return (bytes, sizes)
    }

    /// The `trak` of a chapter track for `chapters` (normalized: sorted, the first at 0).
    ///
    /// - Parameters:
    ///   - chapters: the chapters, first at 0, each before `duration`.
    ///   - trackID: the track's `track_ID`.
    ///   - timescale: the movie timescale, used as the track's media timescale too.
    ///   - duration: the movie's duration in `timescale` units.
    ///   - chunkOffset: where the samples of ``samples(_:)`` lie in the file.
    ///   - wideOffset: write `co64` even when the offset fits in 32 bits (so that the box has
    ///     the same size whatever offset it gets).
    public static func track(chapters: [MovieChapter], trackID: UInt32, timescale: UInt32, duration: UInt64, chunkOffset: UInt64,
                             wideOffset: Bool = false) -> [UInt8] {
        let scale = Int32(clamping: timescale)
        let starts = chapters.map { UInt64(max(0, (try? $0.startTime.converted(to: scale, rounding: .nearest).value) ?? 0)) }
        var durations: [UInt32] = []
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : max(duration, start + 1)
            durations.append(UInt32(clamping: max(end, start + 1) - start))
        }
        let total = durations.reduce(UInt64(0)) { $0 + UInt64($1) }
        let sizes = samples(chapters).sizes
        let wide = total > UInt64(UInt32.max)
        var box = BoxWriter()
        box.box("trak") { trak in
            // Flags 2: in the movie, not enabled (players do not play it as a track).
            trak.fullBox("tkhd", version: wide ? 1 : 0, flags: 2) { b in
                if wide { b.u64(0); b.u64(0) } else { b.u32(0); b.u32(0) }
                b.u32(trackID); b.u32(0)
                if wide { b.u64(total) } else { b.u32(UInt32(total)) }
                b.zeros(8); b.u16(0); b.u16(0); b.u16(0); b.u16(0)
                for value in TrackTransform.identity.matrix { b.i32(value) }
                b.u32(0); b.u32(0)
            }
            trak.box("mdia") { mdia in
                mdia.fullBox("mdhd", version: wide ? 1 : 0) { b in
                    if wide { b.u64(0); b.u64(0); b.u32(timescale); b.u64(total) } else {
                        b.u32(0); b.u32(0); b.u32(timescale); b.u32(UInt32(total))
                    }
                    b.u16(0x55C4); b.u16(0)   // "und"
                }
                mdia.fullBox("hdlr") { b in
                    b.u32(0); b.fourCC("text"); b.zeros(12); b.raw(Array("Chapters".utf8)); b.u8(0)
                }
                mdia.box("minf") { minf in
                    // QuickTime base media information: gmin, then the text media's matrix.
                    minf.box("gmhd") { gmhd in
                        gmhd.fullBox("gmin") { b in
                            b.u16(0x0040)                                // graphics mode: dither copy
                            b.u16(0x8000); b.u16(0x8000); b.u16(0x8000)   // opcolor
                            b.u16(0); b.u16(0)                            // balance, reserved
                        }
                        gmhd.box("text") { b in for value in TrackTransform.identity.matrix { b.i32(value) } }
                    }
                    minf.box("dinf") { dinf in
                        dinf.fullBox("dref") { b in
                            b.u32(1)
                            b.fullBox("url ", flags: 1) { _ in }
                        }
                    }
                    minf.box("stbl") { stbl in
                        stbl.fullBox("stsd") { b in
                            b.u32(1)
                            b.box("text") { e in
                                e.zeros(6); e.u16(1)            // reserved, data_reference_index
                                e.u32(0); e.i32(1)              // display flags, justification
                                e.zeros(6)                      // background colour
                                e.zeros(8)                      // default text box
                                e.zeros(8)                      // reserved
                                e.u16(0); e.u16(0); e.u8(0); e.u16(0)   // font number, face, reserved
                                e.zeros(6)                      // foreground colour
                                e.u8(0)                         // text name (an empty Pascal string)
                            }
                        }
                        stbl.fullBox("stts") { b in
                            var runs: [(count: UInt32, delta: UInt32)] = []
                            for delta in durations {
                                if let last = runs.last, last.delta == delta { runs[runs.count - 1].count += 1 } else { runs.append((1, delta)) }
                            }
                            b.u32(UInt32(runs.count))
                            for run in runs { b.u32(run.count); b.u32(run.delta) }
                        }
                        stbl.fullBox("stsc") { b in b.u32(1); b.u32(1); b.u32(UInt32(sizes.count)); b.u32(1) }
                        stbl.fullBox("stsz") { b in
                            b.u32(0); b.u32(UInt32(sizes.count))
                            for size in sizes { b.u32(size) }
                        }
                        if wideOffset || chunkOffset > UInt64(UInt32.max) {
                            stbl.fullBox("co64") { b in b.u32(1); b.u64(chunkOffset) }
                        } else {
                            stbl.fullBox("stco") { b in b.u32(1); b.u32(UInt32(chunkOffset)) }
                        }
                    }
                }
            }
        }
        return box.bytes
    }

    /// A `tref` box holding a `chap` reference to `trackID`.
    public static func reference(to trackID: UInt32) -> [UInt8] {
        var box = BoxWriter()
        box.box("tref") { tref in tref.box("chap") { b in b.u32(trackID) } }
        return box.bytes
    }
}
