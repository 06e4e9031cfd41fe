/// An encoder whose packets are not all places a decoder may start, and which can make chosen
/// ones so: HE-AAC (``HEAACEncoder``), whose SBR data codes its values against the frame before
/// and carries its header only now and then, so that a decoder starting elsewhere plays the
/// AAC-LC core alone until a header comes. AAC-LC needs no marking: every frame is a start.
public protocol RandomAccessMarking: AnyObject {
    /// Marks packet `index` (counted from the stream's first, 0) as one a decoder may start at:
    /// it carries whatever a decoder needs to start there (HE-AAC: an SBR header and values coded
    /// in frequency only). Mark before the packet is made; the first packet needs no mark.
    func markIndependent(packet index: Int64)
}

extension HEAACEncoder: RandomAccessMarking {}
