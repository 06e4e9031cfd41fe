import FuzzTargets
import Foundation
import Testing

/// Replays every saved fuzz input (crashes found once, and seeds) through its target, and runs each
/// target over built-in inputs and their truncations, so that the targets' checks are exercised
/// in every `make test` even without libFuzzer.
@Suite struct FuzzRegressionTests {
    static let builtIn: [FuzzTarget: [[UInt8]]] = [
        .adts: [ADTSHeaderTests.ffmpegHeader + [UInt8](repeating: 0x21, count: 364), [0xFF, 0xF1, 0x50, 0x80, 0x01, 0x1F, 0xFC, 0x00]],
        .asc: [[0x12, 0x10], [0x12, 0x10, 0x56, 0xE5, 0x00], [0x2B, 0x92, 0x08, 0x00], [0xEB, 0x8A, 0x08, 0x00], [0xF9, 0x46, 0x20, 0xAB]],
        .esds: [ESDescriptorTests.ffmpegStyle, ESDescriptorTests.compact],
        .h264: [x264Head],
        .hevc: [x265Head],
        // Destination URLs: userinfo with an escape and an @ past the authority, IPv6 with a zone,
        // an Icecast password holding / and ?, a port of Eastern Arabic digits.
        .url: ["rtmps://user:p%40ss@live.example:443/app/k@y?token=a", "srt://[fe80::1%25eth0]:9000?streamid=#!::r=live",
               "icecast://source:pa/ss?w@radio.example:8000/live.aac", "srt://host:\u{663}\u{663}"].map { Array($0.utf8) },
        .annexb: [x264Head, x265Head],
        // FFmpeg's dOps, dfLa and alac box payloads (AudioBitstreamsTests names their fields).
        .codecconfig: [[0x00, 0x02, 0x01, 0x38, 0x00, 0x00, 0xBB, 0x80, 0x00, 0x00, 0x00],
                       [0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x22, 0x12, 0x00, 0x12, 0x00, 0x00, 0x04, 0x07, 0x00, 0x05, 0x0A, 0x0A,
                        0xC4, 0x42, 0xF0, 0x00, 0x00, 0x56, 0x22, 0x8E, 0xB4, 0xF3, 0x8C, 0x6D, 0x95, 0xC2, 0x0E, 0xFD, 0xC6, 0xBE, 0xEE,
                        0x63, 0x2A, 0x27, 0x7B],
                       [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x10, 0x28, 0x0A, 0x0E, 0x02, 0x00, 0x00, 0x00, 0x00, 0x40,
                        0x04, 0x00, 0x15, 0x88, 0x80, 0x00, 0x00, 0xAC, 0x44]],
        // Heads of raw data blocks of ffmpeg's AAC: a fill element with its encoder ident before
        // the audio, mono (SCE) and stereo (CPE) frames.
        .ics: ["de02004c61766335392e33372e313030000278ab59a23a3a", "00e2342cf11283f35fd3ffa7fd7fcfef3bd4a926712624ee",
               "01449a6e914de2cd7b6613f766bb6225f1c75c69bbabd5df", "de02004c61766335392e33372e3130300042541fffffe200",
               "21198ffffffffe0e567a91359ebfa7ffc5ffbff8ff4ee717", "214c36fe07fc7fc7fc4e592bbacd7965fcb45dabebabd387"].map(bytes(hex:)),
        // An ilst payload: ©nam "Title", trkn 3/12, and a freeform ISRC.
        .ilst: [bytes(hex: "0000001da96e616d000000156461746100000001000000005469746c650000002074726b6e0000001864617461000000000000000000000003000c0000000000492d2d2d2d0000001c6d65616e00000000636f6d2e6170706c652e6954756e6573000000106e616d650000000049535243000000156461746100000001000000005553524331")],
        // A chpl payload (version 1): 0 s "A", 1.5 s "Bü"; and a chapter text sample with `encd`.
        .chapters: [bytes(hex: "010000000000000002000000000000000001410000000000e4e1c00342c3bc"), bytes(hex: "000548656c6c6f0000000c656e636400000100")],
    ]

    /// The start of a 16×16 x264 stream (`ffmpeg -f lavfi -i testsrc -c:v libx264 -preset
    /// ultrafast`, SEI removed): SPS, PPS and the head of an IDR slice.
    static let x264Head = bytes(hex: "0000000167f4000a91969ec044000003000400000300503c489a800000000168ce0f19200000016588843a084003a00020ce1ca05d5b0796bdea562c6fc00166cd56fe6404c3405bf72d0542b8f8b834")
    /// The start of a 16×16 x265 stream, prefix SEI removed: VPS, SPS, PPS and the head of an
    /// IDR slice segment.
    static let x265Head = bytes(hex: "0000000140010c01ffff0408000003009e0800000300001e959409000000014201010408000003009e0800000300001e901108b2cacab785e02dc08080010000030001000003000a08000000014401c073183008900000012801ac461b8fd77fffcf196a9473cb25d6fa43fccf7558df8071da252ea95ab96bb007ffe11132dcd8f8")

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    @Test(arguments: FuzzTarget.allCases)
    func builtInInputsAndEveryTruncation(target: FuzzTarget) {
        for input in Self.builtIn[target] ?? [] {
            for length in 0...input.count { target.run(Array(input.prefix(length))) }
            for index in input.indices {
                var flipped = input
                flipped[index] ^= 0x5A
                target.run(flipped)
            }
        }
    }

    @Test func savedInputsReplay() throws {
        guard let root = Bundle.module.url(forResource: "Regressions", withExtension: nil) else {
            Issue.record("the Regressions resource folder is missing from the test bundle"); return
        }
        var replayed = 0
        for target in FuzzTarget.allCases {
            let folder = root.appendingPathComponent(target.rawValue)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                target.run(Array(try Data(contentsOf: folder.appendingPathComponent(name))))
                replayed += 1
            }
        }
        // A finding traps inside `run`; reaching here means every saved input passes.
        #expect(replayed > 0, "no saved fuzz inputs found under \(root.path)")
    }
}
