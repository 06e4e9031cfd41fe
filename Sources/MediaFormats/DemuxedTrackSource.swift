/// One track of an MP4 as a ``PacketSource``: its samples in decode order, with the file's and
/// the track's damage, and a read error that ends the track reported as damage (the samples
/// before it were good).
package struct DemuxedTrackSource: PacketSource {
    package let demuxer: MP4Demuxer<MediaInput.Source>
    /// The track read.
    package let track: MP4Track
    private var pendingDamage: [DamageEvent]
    private var decodeSeconds = 0.0
    private var isEnded = false

    package init(demuxer: MP4Demuxer<MediaInput.Source>, track: MP4Track) {
        self.demuxer = demuxer
        self.track = track
        pendingDamage = (demuxer.file?.damage ?? []) + [track.emptyAudioSamples].compactMap { $0 }
    }

    package mutating func next() throws(MP4Error) -> MediaSample? {
        guard !isEnded else { return nil }
        do {
            guard let sample = try demuxer.nextSample(trackID: track.id) else {
                isEnded = true
                return nil
            }
            decodeSeconds = sample.decodeTime.seconds + sample.duration.seconds
            return sample
        } catch {
            isEnded = true
            pendingDamage.append(DamageEvent(.endedEarly, message: "\(error); the track ends there"))
            return nil
        }
    }

    package mutating func nextRun(maxBytes: Int) throws(MP4Error) -> MediaSampleRun? {
        guard !isEnded else { return nil }
        do {
            guard let run = try demuxer.nextSampleRun(trackID: track.id, maxBytes: maxBytes) else {
                isEnded = true
                return nil
            }
            decodeSeconds = (Double(run.firstDecodeTime) + Double(run.duration)) / Double(run.timescale)
            return run
        } catch {
            isEnded = true
            pendingDamage.append(DamageEvent(.endedEarly, message: "\(error); the track ends there"))
            return nil
        }
    }

    /// Steps over `count` samples without reading them; returns how many.
    package mutating func skip(_ count: Int) -> Int {
        guard !isEnded else { return 0 }
        return demuxer.skipSamples(trackID: track.id, count: count)
    }

    package var progress: MediaProgress {
        MediaProgress(mediaSeconds: decodeSeconds, totalSeconds: Double(track.mediaDuration) / Double(max(track.timescale, 1)))
    }

    package mutating func takeDamage() -> [DamageEvent] {
        defer { pendingDamage.removeAll() }
        return pendingDamage
    }
}
