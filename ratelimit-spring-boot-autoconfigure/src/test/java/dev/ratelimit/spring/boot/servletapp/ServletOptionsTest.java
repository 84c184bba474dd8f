package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.OptionsScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The servlet application in shadow mode, with OpenAI's headers instead of the classic family. */
@SpringBootTest(
        classes = ServletTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {OptionsScenarios.SHADOW_MODE, OptionsScenarios.IETF_AND_OPENAI_HEADERS})
class ServletOptionsTest extends OptionsScenarios {}
