public enum FuzzTarget {}
