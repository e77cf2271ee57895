/* libkern/OSThermalNotification.h (tests/apple/README). */
typedef enum {
	kOSThermalPressureLevelNominal = 0,
	kOSThermalPressureLevelModerate,
	kOSThermalPressureLevelHeavy,
	kOSThermalPressureLevelTrapping,
	kOSThermalPressureLevelSleeping
} OSThermalPressureLevel;
extern const char *const kOSThermalNotificationPressureLevelName;
