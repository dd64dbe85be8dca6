export const HUB_VERSION = "0.1.0";
