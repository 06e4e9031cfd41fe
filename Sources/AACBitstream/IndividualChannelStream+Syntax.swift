internal import MediaCore

/// The scalefactor band layout of one sampling rate (ISO/IEC 14496-3, 4.5.4): what the
/// syntax of a channel stream depends on.
struct BandLayout: Sendable {
    let long: [Int]
    let short: [Int]

    init?(samplingFrequencyIndex index: Int) {
        guard let long = ScaleFactorBandTable.longWindowOffsets(samplingFrequencyIndex: index),
              let short = ScaleFactorBandTable.shortWindowOffsets(samplingFrequencyIndex: index) else { return nil }
        self.long = long
        self.short = short
    }

    func offsets(_ info: ChannelStreamInfo) -> [Int] { info.isEightShort ? short : long }
}

/// Bit reads that turn a read past the end into ``AACBitstreamError/truncated(structure:_:)``.
extension BitReader {
    mutating func field(_ count: Int, _ structure: String) throws(AACBitstreamError) -> Int {
        do { return Int(try readBits(count)) } catch { throw .truncated(structure: structure, error) }
    }

    mutating func flag(_ structure: String) throws(AACBitstreamError) -> Bool {
        try field(1, structure) == 1
    }
}

/// The shape of a spectral codebook (ISO/IEC 14496-3, 4.6.3.2, Table 4.152): tuple size,
/// whether values are signed in the index, the index base and the largest magnitude.
struct SpectralCodebookShape {
    let dimension: Int
    let signed: Bool
    let modulo: Int
    let offset: Int
    let largest: Int

    init(_ codebook: Int) {
        switch codebook {
        case 1, 2: self.init(dimension: 4, signed: true, modulo: 3, offset: 1, largest: 1)
        case 3, 4: self.init(dimension: 4, signed: false, modulo: 3, offset: 0, largest: 2)
        case 5, 6: self.init(dimension: 2, signed: true, modulo: 9, offset: 4, largest: 4)
        case 7, 8: self.init(dimension: 2, signed: false, modulo: 8, offset: 0, largest: 7)
        case 9, 10: self.init(dimension: 2, signed: false, modulo: 13, offset: 0, largest: 12)
        default: self.init(dimension: 2, signed: false, modulo: 17, offset: 0, largest: 8191)
        }
    }

    private init(dimension: Int, signed: Bool, modulo: Int, offset: Int, largest: Int) {
        self.dimension = dimension
        self.signed = signed
        self.modulo = modulo
        self.offset = offset
        self.largest = largest
    }
}

extension ChannelStreamInfo {
    /// Reads `ics_info()` (Table 4.6). `predictor_data_present` must be 0 in AAC-LC.
    init(from reader: inout BitReader, layout: BandLayout) throws(AACBitstreamError) {
        let structure = "ics_info"
        reservedBit = try reader.flag(structure)
        // Two bits always give a window sequence.
        windowSequence = ICSInfo.WindowSequence(rawValue: UInt8(try reader.field(2, structure))) ?? .onlyLong
        windowShape = UInt8(try reader.field(1, structure))
        let offset = reader.byteOffset
        if windowSequence == .eightShort {
            maxSFB = try reader.field(4, structure)
            scaleFactorGrouping = UInt8(try reader.field(7, structure))
        } else {
            maxSFB = try reader.field(6, structure)
            scaleFactorGrouping = 0
            if try reader.flag(structure) {
                throw .invalidField(structure: structure, field: "predictor_data_present", value: 1,
                                    offset: reader.byteOffset, allowed: "0 (prediction is AAC Main only)")
            }
        }
        let bands = layout.offsets(self).count - 1
        guard maxSFB <= bands else {
            throw .invalidField(structure: structure, field: "max_sfb", value: Int64(maxSFB), offset: offset, allowed: "0...\(bands)")
        }
    }

    func write(to writer: inout BitWriter) throws(AACBitstreamError) {
        writer.writeFlag(reservedBit)
        writer.write(windowSequence.rawValue, bits: 2)
        writer.write(windowShape & 1, bits: 1)
        let width = isEightShort ? 4 : 6
        guard maxSFB >= 0, maxSFB < 1 << width else {
            throw .unrepresentable(structure: "ics_info", field: "max_sfb", value: Int64(maxSFB), allowed: "0..<\(1 << width)")
        }
        writer.write(maxSFB, bits: width)
        if isEightShort { writer.write(scaleFactorGrouping & 0x7F, bits: 7) } else { writer.writeFlag(false) }
    }
}

extension IndividualChannelStream {
    /// Reads `individual_channel_stream(common_window)` (Table 4.44); `commonInfo` is the pair's
    /// `ics_info` when it has a common window.
    init(from reader: inout BitReader, commonInfo: ChannelStreamInfo?, layout: BandLayout) throws(AACBitstreamError) {
        let structure = "individual_channel_stream"
        globalGain = UInt8(try reader.field(8, structure))
        if let commonInfo { info = commonInfo } else { info = try ChannelStreamInfo(from: &reader, layout: layout) }
        let groups = info.windowGroupLengths
        let maxSFB = info.maxSFB

        // section_data (Table 4.46)
        let lengthBits = info.isEightShort ? 3 : 5
        let escape = (1 << lengthBits) - 1
        var sections: [[Section]] = []
        for _ in groups {
            var list: [Section] = []
            var band = 0
            while band < maxSFB {
                let offset = reader.byteOffset
                let codebook = try reader.field(4, "section_data")
                if codebook == 12 {
                    throw .invalidField(structure: "section_data", field: "sect_cb", value: 12, offset: offset, allowed: "0–11, 13–15")
                }
                var length = 0
                var increment: Int
                repeat {
                    increment = try reader.field(lengthBits, "section_data")
                    length += increment
                    guard band + length <= maxSFB else {
                        throw .invalidField(structure: "section_data", field: "sect_len", value: Int64(band + length),
                                            offset: reader.byteOffset, allowed: "sections ending by max_sfb \(maxSFB)")
                    }
                } while increment == escape
                list.append(Section(codebook: UInt8(codebook), length: length))
                band += length
            }
            sections.append(list)
        }
        self.sections = sections
        let codebooks = sections.flatMap { group in group.flatMap { repeatElement($0.codebook, count: $0.length) } }

        // scale_factor_data (Table 4.47; 4.6.2.3, 4.6.8.1, 4.6.13)
        var scaleFactor = Int(globalGain)
        var position = 0
        var noise = Int(globalGain) - 90
        var firstNoise = true
        var values = [Int](repeating: 0, count: codebooks.count)
        let book = HuffmanCodebook.scaleFactor
        for (band, codebook) in codebooks.enumerated() {
            switch codebook {
            case Section.zeroCodebook:
                continue
            case Section.intensityCodebook, Section.intensityCodebook2:
                position += try book.decode(from: &reader, structure: "scale_factor_data") - 60
                values[band] = position
            case Section.noiseCodebook:
                if firstNoise {
                    firstNoise = false
                    noise += try reader.field(9, "scale_factor_data") - 256
                } else {
                    noise += try book.decode(from: &reader, structure: "scale_factor_data") - 60
                }
                values[band] = noise
            default:
                let offset = reader.byteOffset
                scaleFactor += try book.decode(from: &reader, structure: "scale_factor_data") - 60
                guard (0...255).contains(scaleFactor) else {
                    throw .invalidField(structure: "scale_factor_data", field: "scale_factor", value: Int64(scaleFactor), offset: offset, allowed: "0...255")
                }
                values[band] = scaleFactor
            }
        }
        scaleFactors = values

        // pulse_data (Table 4.7)
        let offsets = layout.offsets(info)
        if try reader.flag(structure) {
            if info.isEightShort {
                throw .invalidField(structure: structure, field: "pulse_data_present", value: 1, offset: reader.byteOffset,
                                    allowed: "0 with eight short windows")
            }
            let count = try reader.field(2, "pulse_data") + 1
            let start = try reader.field(6, "pulse_data")
            guard start < offsets.count - 1 else {
                throw .invalidField(structure: "pulse_data", field: "pulse_start_sfb", value: Int64(start), offset: reader.byteOffset,
                                    allowed: "0..<\(offsets.count - 1)")
            }
            var pulseOffsets: [UInt8] = []
            var amplitudes: [UInt8] = []
            var coefficient = offsets[start]
            for _ in 0..<count {
                let pulseOffset = try reader.field(5, "pulse_data")
                coefficient += pulseOffset
                guard coefficient < 1024 else {
                    throw .invalidField(structure: "pulse_data", field: "pulse_offset", value: Int64(coefficient), offset: reader.byteOffset,
                                        allowed: "positions below 1024")
                }
                pulseOffsets.append(UInt8(pulseOffset))
                amplitudes.append(UInt8(try reader.field(4, "pulse_data")))
            }
            pulse = PulseData(startBand: UInt8(start), offsets: pulseOffsets, amplitudes: amplitudes)
        } else {
            pulse = nil
        }

        // tns_data (Table 4.48)
        if try reader.flag(structure) {
            let short = info.isEightShort
            var windows: [TNSData.Window] = []
            for _ in 0..<info.windowCount {
                let filterCount = try reader.field(short ? 1 : 2, "tns_data")
                var resolution: UInt8 = 0
                var filters: [TNSData.Filter] = []
                if filterCount > 0 { resolution = UInt8(try reader.field(1, "tns_data")) }
                for _ in 0..<filterCount {
                    let length = try reader.field(short ? 4 : 6, "tns_data")
                    let order = try reader.field(short ? 3 : 5, "tns_data")
                    guard order <= (short ? 7 : 12) else {
                        throw .invalidField(structure: "tns_data", field: "order", value: Int64(order), offset: reader.byteOffset,
                                            allowed: short ? "0...7" : "0...12 (AAC-LC)")
                    }
                    var direction = false
                    var compress: UInt8 = 0
                    var coefficients: [UInt8] = []
                    if order > 0 {
                        direction = try reader.flag("tns_data")
                        compress = UInt8(try reader.field(1, "tns_data"))
                        let width = Int(resolution) + 3 - Int(compress)
                        for _ in 0..<order { coefficients.append(UInt8(try reader.field(width, "tns_data"))) }
                    }
                    filters.append(TNSData.Filter(length: UInt8(length), direction: direction, coefficientCompress: compress, coefficients: coefficients))
                }
                windows.append(TNSData.Window(coefficientResolution: resolution, filters: filters))
            }
            tns = TNSData(windows: windows)
        } else {
            tns = nil
        }

        // gain_control_data: AAC SSR only
        if try reader.flag(structure) {
            throw .invalidField(structure: structure, field: "gain_control_data_present", value: 1, offset: reader.byteOffset,
                                allowed: "0 (SSR only)")
        }

        // spectral_data (Table 4.50; 4.6.3)
        var coefficients = [Int16](repeating: 0, count: 1024)
        var window = 0
        for (group, length) in groups.enumerated() {
            for band in 0..<maxSFB {
                let codebook = Int(codebooks[group * maxSFB + band])
                if codebook == 0 || codebook > 11 { continue }
                for member in 0..<length {
                    let base = (window + member) * 128
                    try Self.readSpectrum(codebook, from: &reader, into: &coefficients,
                                          range: base + offsets[band] ..< base + offsets[band + 1])
                }
            }
            window += length
        }
        self.coefficients = coefficients
    }

    private static func readSpectrum(_ codebook: Int, from reader: inout BitReader, into coefficients: inout [Int16],
                                     range: Range<Int>) throws(AACBitstreamError) {
        let structure = "spectral_data"
        let book = HuffmanCodebook.spectral[codebook - 1]
        let shape = SpectralCodebookShape(codebook)
        var index = range.lowerBound
        while index < range.upperBound {
            var code = try book.decode(from: &reader, structure: structure)
            var tuple = [0, 0, 0, 0]
            for slot in stride(from: shape.dimension - 1, through: 0, by: -1) {
                tuple[slot] = code % shape.modulo - shape.offset
                code /= shape.modulo
            }
            if !shape.signed {
                for slot in 0..<shape.dimension where tuple[slot] != 0 {
                    if try reader.flag(structure) { tuple[slot] = -tuple[slot] }
                }
                if codebook == 11 {
                    for slot in 0..<shape.dimension where abs(tuple[slot]) == 16 {
                        var prefix = 0
                        while try reader.flag(structure) {
                            prefix += 1
                            guard prefix <= 8 else {
                                throw .invalidField(structure: structure, field: "escape prefix", value: Int64(prefix), offset: reader.byteOffset, allowed: "0...8")
                            }
                        }
                        let magnitude = (1 << (prefix + 4)) + (try reader.field(prefix + 4, structure))
                        tuple[slot] = tuple[slot] < 0 ? -magnitude : magnitude
                    }
                }
            }
            for slot in 0..<shape.dimension { coefficients[index + slot] = Int16(tuple[slot]) }
            index += shape.dimension
        }
    }

    /// Writes the stream; with `commonWindow` its `ics_info` is the pair's and is not written.
    func write(to writer: inout BitWriter, commonWindow: Bool, layout: BandLayout) throws(AACBitstreamError) {
        let structure = "individual_channel_stream"
        writer.write(globalGain, bits: 8)
        if !commonWindow { try info.write(to: &writer) }
        let groups = info.windowGroupLengths
        let maxSFB = info.maxSFB
        guard sections.count == groups.count else {
            throw .unrepresentable(structure: "section_data", field: "groups", value: Int64(sections.count), allowed: "\(groups.count)")
        }
        let lengthBits = info.isEightShort ? 3 : 5
        let escape = (1 << lengthBits) - 1
        for group in sections {
            var total = 0
            for section in group {
                guard section.codebook < 16, section.codebook != 12, section.length >= 0 else {
                    throw .unrepresentable(structure: "section_data", field: "sect_cb", value: Int64(section.codebook), allowed: "0–11, 13–15")
                }
                writer.write(section.codebook, bits: 4)
                var left = section.length
                while left >= escape {
                    writer.write(escape, bits: lengthBits)
                    left -= escape
                }
                writer.write(left, bits: lengthBits)
                total += section.length
            }
            guard total == maxSFB else {
                throw .unrepresentable(structure: "section_data", field: "bands", value: Int64(total), allowed: "max_sfb \(maxSFB)")
            }
        }
        let codebooks = bandCodebooks
        guard scaleFactors.count == codebooks.count, coefficients.count == 1024 else {
            throw .unrepresentable(structure: structure, field: "scale factors or coefficients", value: Int64(scaleFactors.count),
                                   allowed: "one per band, 1024 coefficients")
        }
        var scaleFactor = Int(globalGain)
        var position = 0
        var noise = Int(globalGain) - 90
        var firstNoise = true
        let book = HuffmanCodebook.scaleFactor
        for (band, codebook) in codebooks.enumerated() {
            let value = scaleFactors[band]
            switch codebook {
            case Section.zeroCodebook:
                continue
            case Section.intensityCodebook, Section.intensityCodebook2:
                try book.encode(value - position + 60, to: &writer, structure: "scale_factor_data")
                position = value
            case Section.noiseCodebook:
                if firstNoise {
                    firstNoise = false
                    let raw = value - noise + 256
                    guard (0..<512).contains(raw) else {
                        throw .unrepresentable(structure: "scale_factor_data", field: "dpcm_noise_nrg", value: Int64(raw), allowed: "0..<512")
                    }
                    writer.write(raw, bits: 9)
                } else {
                    try book.encode(value - noise + 60, to: &writer, structure: "scale_factor_data")
                }
                noise = value
            default:
                try book.encode(value - scaleFactor + 60, to: &writer, structure: "scale_factor_data")
                scaleFactor = value
            }
        }
        writer.writeFlag(pulse != nil)
        if let pulse {
            guard (1...4).contains(pulse.offsets.count), pulse.amplitudes.count == pulse.offsets.count else {
                throw .unrepresentable(structure: "pulse_data", field: "number_pulse", value: Int64(pulse.offsets.count), allowed: "1...4")
            }
            writer.write(pulse.offsets.count - 1, bits: 2)
            writer.write(pulse.startBand & 0x3F, bits: 6)
            for (offset, amplitude) in zip(pulse.offsets, pulse.amplitudes) {
                writer.write(offset & 0x1F, bits: 5)
                writer.write(amplitude & 0xF, bits: 4)
            }
        }
        writer.writeFlag(tns != nil)
        if let tns {
            let short = info.isEightShort
            guard tns.windows.count == info.windowCount else {
                throw .unrepresentable(structure: "tns_data", field: "windows", value: Int64(tns.windows.count), allowed: "\(info.windowCount)")
            }
            for window in tns.windows {
                guard window.filters.count < (short ? 2 : 4) else {
                    throw .unrepresentable(structure: "tns_data", field: "n_filt", value: Int64(window.filters.count), allowed: short ? "0...1" : "0...3")
                }
                writer.write(window.filters.count, bits: short ? 1 : 2)
                if !window.filters.isEmpty { writer.write(window.coefficientResolution & 1, bits: 1) }
                for filter in window.filters {
                    guard filter.coefficients.count <= (short ? 7 : 12) else {
                        throw .unrepresentable(structure: "tns_data", field: "order", value: Int64(filter.coefficients.count), allowed: short ? "0...7" : "0...12")
                    }
                    writer.write(filter.length & (short ? 0xF : 0x3F), bits: short ? 4 : 6)
                    writer.write(filter.coefficients.count, bits: short ? 3 : 5)
                    if !filter.coefficients.isEmpty {
                        writer.writeFlag(filter.direction)
                        writer.write(filter.coefficientCompress & 1, bits: 1)
                        let width = Int(window.coefficientResolution & 1) + 3 - Int(filter.coefficientCompress & 1)
                        for coefficient in filter.coefficients { writer.write(coefficient & UInt8((1 << width) - 1), bits: width) }
                    }
                }
            }
        }
        writer.writeFlag(false)   // gain_control_data_present
        let offsets = layout.offsets(info)
        guard maxSFB < offsets.count else {
            throw .unrepresentable(structure: "ics_info", field: "max_sfb", value: Int64(maxSFB), allowed: "0...\(offsets.count - 1)")
        }
        var window = 0
        for (group, length) in groups.enumerated() {
            for band in 0..<maxSFB {
                let codebook = Int(codebooks[group * maxSFB + band])
                if codebook == 0 || codebook > 11 { continue }
                for member in 0..<length {
                    let base = (window + member) * 128
                    try writeSpectrum(codebook, to: &writer, range: base + offsets[band] ..< base + offsets[band + 1])
                }
            }
            window += length
        }
    }

    private func writeSpectrum(_ codebook: Int, to writer: inout BitWriter, range: Range<Int>) throws(AACBitstreamError) {
        let structure = "spectral_data"
        let book = HuffmanCodebook.spectral[codebook - 1]
        let shape = SpectralCodebookShape(codebook)
        var index = range.lowerBound
        while index < range.upperBound {
            var code = 0
            for slot in 0..<shape.dimension {
                let value = Int(coefficients[index + slot])
                guard abs(value) <= shape.largest else {
                    throw .unrepresentable(structure: structure, field: "codebook \(codebook) value", value: Int64(value), allowed: "±\(shape.largest)")
                }
                let digit = shape.signed ? value + shape.offset : min(abs(value), 16)
                code = code * shape.modulo + digit
            }
            try book.encode(code, to: &writer, structure: structure)
            if !shape.signed {
                for slot in 0..<shape.dimension where coefficients[index + slot] != 0 {
                    writer.writeFlag(coefficients[index + slot] < 0)
                }
                if codebook == 11 {
                    for slot in 0..<shape.dimension where abs(Int(coefficients[index + slot])) >= 16 {
                        let magnitude = abs(Int(coefficients[index + slot]))
                        var prefix = 0
                        while magnitude >= 1 << (prefix + 5) { prefix += 1 }
                        for _ in 0..<prefix { writer.writeFlag(true) }
                        writer.writeFlag(false)
                        writer.write(magnitude - (1 << (prefix + 4)), bits: prefix + 4)
                    }
                }
            }
            index += shape.dimension
        }
    }
}
