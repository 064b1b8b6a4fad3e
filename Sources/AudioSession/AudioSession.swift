public enum AudioSessionPlaceholder {}
