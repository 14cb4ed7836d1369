// Minimal <objc/message.h> stub for checkm.sh: objc_msgSend as the SDK
// declares it without OBJC_OLD_DISPATCH_PROTOTYPES (callers cast it to the
// method's type).
#pragma once
void objc_msgSend(void);
