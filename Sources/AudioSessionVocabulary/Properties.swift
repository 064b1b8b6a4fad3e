/// A PipeWire property dictionary as received (`struct spa_dict`), decoded with repair.
public typealias Properties = [String: String]
