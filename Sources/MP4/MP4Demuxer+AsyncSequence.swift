public import MediaCore

extension MP4Demuxer {
    /// The samples of a chosen track as an `AsyncSequence`; it ends with the track, and throws the
    /// error that ends a damaged one.
    public func samples(trackID: UInt32) -> MP4SampleSequence<Source> {
        MP4SampleSequence(demuxer: self, trackID: trackID)
    }
}

/// The samples of one track of an ``MP4Demuxer``, pulled as they are iterated.
public struct MP4SampleSequence<Source: RandomAccessByteSource>: AsyncSequence {
    /// Each element is one sample.
    public typealias Element = MediaSample
    /// Iteration fails only with ``MP4Error``.
    public typealias Failure = MP4Error

    let demuxer: MP4Demuxer<Source>
    let trackID: UInt32

    /// The iterator.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let demuxer: MP4Demuxer<Source>
        let trackID: UInt32

        /// The next sample, or `nil` at the end of the track.
        public mutating func next() async throws(MP4Error) -> MediaSample? {
            try demuxer.nextSample(trackID: trackID)
        }

        /// The next sample, or `nil` at the end of the track.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MP4Error) -> MediaSample? {
            try demuxer.nextSample(trackID: trackID)
        }
    }

    /// An iterator over the track's remaining samples.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(demuxer: demuxer, trackID: trackID)
    }
}
